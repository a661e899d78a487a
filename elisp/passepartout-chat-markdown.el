;;; passepartout-chat-markdown.el --- A reply's Markdown, rewritten as org  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience, outlines
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Models are asked for org markup, and many answer in Markdown anyway.
;; When a turn ends, its reply is rewritten in place:
;;
;;   ```lang ... ```     ->  #+begin_src lang :eval no ... #+end_src
;;   ``` ... ```         ->  #+begin_example ... #+end_example
;;   `code`              ->  ~code~  (=code= when it holds a ~)
;;   **bold**, __bold__  ->  *bold*
;;   [text](url)         ->  [[url][text]]
;;   # Title             ->  *Title*  (a heading would split the chat)
;;
;; Code blocks and tool drawers are left as they are.  The reply streams
;; in as it comes; the rewrite runs once, on the whole text, so that no
;; construct is cut between two chunks.

;;; Code:

(require 'subr-x)

(defconst passepartout-chat-markdown--inline
  (concat "`\\([^`\n]+\\)`"                             ; 1: code
          "\\|\\*\\*\\([^*\n]+\\)\\*\\*"                ; 2: bold
          "\\|__\\([^_\n]+\\)__"                        ; 3: bold
          "\\|\\[\\([^]\n]+\\)\\](\\([^)[:space:]]+\\))") ; 4, 5: link
  "The Markdown spans of one line, code first: nothing inside code changes.")

(defun passepartout-chat-markdown--span (match)
  "Return the org form of MATCH, one span of `passepartout-chat-markdown--inline'."
  (cond ((match-beginning 1)
         (let ((code (match-string 1 match)))
           (if (string-search "~" code) (concat "=" code "=") (concat "~" code "~"))))
        ((match-beginning 2) (concat "*" (match-string 2 match) "*"))
        ((match-beginning 3) (concat "*" (match-string 3 match) "*"))
        (t (format "[[%s][%s]]" (match-string 5 match) (match-string 4 match)))))

(defun passepartout-chat-markdown-line (line)
  "Return LINE, one line of Markdown outside code blocks, in org markup."
  (let ((line (if (string-match "\\`\\([ \t]*\\)#+[ \t]+\\(.*[^ \t]\\)[ \t]*\\'" line)
                  (concat (match-string 1 line) "*" (match-string 2 line) "*")
                line)))
    (replace-regexp-in-string passepartout-chat-markdown--inline
                              #'passepartout-chat-markdown--span line t t)))

(defun passepartout-chat-markdown-to-org (start end)
  "Rewrite the Markdown between START and END of the current buffer as org.
Code blocks become org blocks; :TOOL: drawers are not touched."
  (save-excursion
    (let ((end (copy-marker end))
          (block nil))                  ; "src" or "example" inside a fence
      (goto-char start)
      (while (< (point) end)
        (cond
         ((looking-at "^\\([ \t]*\\)```+[ \t]*\\([^`[:space:]]*\\)[^\n]*$")
          (if block
              (progn (replace-match (concat "\\1#+end_" block) t)
                     (setq block nil))
            (setq block (if (string-empty-p (match-string 2)) "example" "src"))
            ;; Shown, never run: babel refuses a block with :eval no.
            (replace-match (concat "\\1#+begin_" block
                                   (if (equal block "src") " \\2 :eval no" ""))
                           t)))
         (block)
         ((looking-at-p "^[ \t]*:TOOL:[ \t]*$")
          (re-search-forward "^[ \t]*:END:[ \t]*$" end 'move))
         (t
          (let* ((bol (line-beginning-position)) (eol (line-end-position))
                 (line (buffer-substring-no-properties bol eol))
                 (org (passepartout-chat-markdown-line line)))
            (unless (equal line org)
              (delete-region bol eol)
              (goto-char bol)
              (insert org)))))
        (forward-line 1))
      (when block                       ; a reply cut inside a fence
        (goto-char end)
        (unless (bolp) (insert "\n"))
        (insert "#+end_" block "\n"))
      (set-marker end nil))))

(provide 'passepartout-chat-markdown)
;;; passepartout-chat-markdown.el ends here
