;;; passepartout-chat-render.el --- Write replies and tool calls into org  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience, outlines
;; Package-Requires: ((emacs "28.1") (org "9.5"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; How a turn's events become org text at the turn's marker: reply text
;; (a line starting with "*" gets a space, so a model's bullet never
;; becomes a heading), notes (a line of its own), and tool calls, each in a
;; folded :TOOL: drawer that gains the result when it arrives:
;;
;;   :TOOL:
;;   - tool :: write-file
;;   - args :: (:path "/tmp/x" :content "hi")
;;   - result :: ok
;;   #+begin_example
;;   wrote 2 bytes
;;   #+end_example
;;   :END:
;;
;; A denial is a plain line that says what was stopped and why.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)
(require 'passepartout-turn)

(declare-function org-fold-hide-drawer-toggle "org-fold" (&optional force no-error element))

(defconst passepartout-chat-render-max-output 4000
  "The most characters of a tool's output or arguments shown in the chat.")

(defun passepartout-chat-render-escape (text bol)
  "Return TEXT with a space before each \"*\" that would start a line.
Bidi controls and invisible characters are shown as \\uNNNN (see
`passepartout-visible'), so a reply reads in the order it was written.
BOL non-nil means TEXT starts at the beginning of a line."
  (let ((out (passepartout-visible
              (if (string-search "\n*" text)
                  (replace-regexp-in-string "\n\\*" "\n *" text t t)
                text))))
    (if (and bol (string-prefix-p "*" out)) (concat " " out) out)))

(defconst passepartout-chat-render--structure
  (concat "^\\([ \t]*\\)\\(?:#\\+\\|:[^ \t\n:]*:"
          "\\|\\(?:SCHEDULED\\|DEADLINE\\|CLOSED\\):\\|%%\\)")
  "A reply line org would read as structure.
That is a keyword, drawer, property, planning line or diary sexp.  A line
that starts with org's comma already is left alone: outside a block org
reads it as text, inside one the comma is org's own escape.")

(defun passepartout-chat-render-escape-lines (start end)
  "Put org's comma before each structure line between START and END.
See `passepartout-chat-render--structure'.  Lines are looked at from the
start of START's line, so a line cut between two chunks is escaped once it is
whole enough to be structure (and only once)."
  (save-excursion
    (let ((case-fold-search nil)
          (end (copy-marker end)))
      (goto-char start)
      (beginning-of-line)
      (while (re-search-forward passepartout-chat-render--structure end t)
        (goto-char (match-end 1))
        (insert ",")
        (forward-line 1))
      (set-marker end nil))))

(defun passepartout-chat-render-reply (text)
  "Return TEXT, a whole reply, made fit for the chat: no org structure.
No line is a heading, drawer, keyword or planning line of the reply's
heading, and nothing in it runs (see `passepartout-inert')."
  (with-temp-buffer
    (insert (passepartout-chat-render-escape text t))
    ;; In the order a streamed reply gets them, so that both read the same.
    (passepartout-inert-region (point-min) (point-max))
    (passepartout-chat-render-escape-lines (point-min) (point-max))
    (buffer-string)))

(defun passepartout-chat-render--insert (turn text)
  "Insert TEXT at TURN's end marker and track whether a line is open."
  (unless (string-empty-p text)
    (let ((end (passepartout-turn-end turn)))
      (with-current-buffer (marker-buffer end)
        ;; Like `save-excursion', without a marker per chunk: point after
        ;; the reply moves with the text, point before or at it stays.
        (let ((pos (point)) (at (marker-position end)))
          (goto-char at)
          (insert text)
          ;; A link or list cut between two chunks is whole once the second comes.
          (passepartout-inert-region
           (max (save-excursion (goto-char at) (line-beginning-position)) (- at 1000))
           (point))
          (goto-char (if (> pos at) (+ pos (- (point) at)) pos))))
      (setf (passepartout-turn-bol turn) (eq (aref text (1- (length text))) ?\n)))))

(defun passepartout-chat-render-text (turn text)
  "Insert TEXT, a piece of TURN's reply.
A line of it org would read as structure gets org's comma, also when it came
cut between chunks: a reply never gives its heading a property drawer."
  (let* ((end (passepartout-turn-end turn))
         (at (marker-position end)))
    (passepartout-chat-render--insert
     turn (passepartout-chat-render-escape text (passepartout-turn-bol turn)))
    (with-current-buffer (marker-buffer end)
      (passepartout-chat-render-escape-lines at end)))
  (cl-incf (passepartout-turn-chunks turn)))

(defun passepartout-chat-render--fresh-line (turn)
  "Make sure TURN's next insertion is at a line start."
  (unless (passepartout-turn-bol turn)
    (passepartout-chat-render--insert turn "\n")))

(defun passepartout-chat-render-note (turn line)
  "Insert LINE, a note about TURN, on a line of its own.
LINE starts with fixed text, never a heading; newlines in it become spaces."
  (passepartout-chat-render--fresh-line turn)
  (passepartout-chat-render--insert
   turn (concat (passepartout-chat-render--one-line line) "\n")))

;;;; Tools

(defun passepartout-chat-render--clip (text)
  "Return TEXT cut to `passepartout-chat-render-max-output' characters.
Bidi controls and invisible characters are shown, see `passepartout-visible'."
  (passepartout-visible
   (if (> (length text) passepartout-chat-render-max-output)
       (concat (substring text 0 passepartout-chat-render-max-output) "\n[...]")
     text)))

(defun passepartout-chat-render--value (value)
  "Return VALUE as text for the chat."
  (passepartout-chat-render--clip
   (if (stringp value) value
     (let ((print-length 20) (print-level 4)) (prin1-to-string value)))))

(defun passepartout-chat-render--example (text)
  "Return TEXT as an org example block, escaped so nothing in it is structure."
  (let ((body (replace-regexp-in-string
               "^\\([ \t]*\\):END:" "\\1,:END:"
               (org-escape-code-in-string (passepartout-chat-render--clip text)) t)))
    (concat "#+begin_example\n" body
            (if (string-suffix-p "\n" body) "" "\n")
            "#+end_example\n")))

(defun passepartout-chat-render--one-line (text)
  "Return TEXT on one line."
  (replace-regexp-in-string "[\n\r]+" " " text t t))

(defun passepartout-chat-render--fold (pos)
  "Fold the drawer whose first line begins at POS."
  (save-excursion
    (goto-char pos)
    (ignore-errors
      (if (fboundp 'org-fold-hide-drawer-toggle)
          (org-fold-hide-drawer-toggle t)
        (org-hide-drawer-toggle t)))))

(defun passepartout-chat-render-tool (turn info)
  "Show the tool event INFO of TURN: a call, its result or a denial."
  (let ((event (passepartout--name (plist-get info :event)))
        (name (passepartout--name (plist-get info :name)))
        (call-id (plist-get info :call-id)))
    (pcase event
      ("tool" (passepartout-chat-render--call turn name call-id (plist-get info :args)))
      ("tool-result"
       (passepartout-chat-render--result turn name call-id (plist-get info :ok)
                                         (plist-get info :output)))
      ("denied"
       ;; A refusal by the person was said already, in the approval's own words.
       (unless (and (not (string-empty-p name))
                    (cl-some (lambda (refused) (string-prefix-p name refused))
                             (passepartout-turn-refused turn)))
         (passepartout-chat-render-note
        turn (format "*Denied:* %s%s — %s" name
                     (let ((args (plist-get info :args)))
                       (if args (concat " " (passepartout-chat-render--one-line
                                             (passepartout-chat-render--value args)))
                         ""))
                     (passepartout-chat-render--value (or (plist-get info :reason)
                                                          "no reason given"))))))
      (_ (passepartout-chat-render-note turn (format "Tool event %s: %s" event name))))))

(defun passepartout-chat-render--call (turn name call-id args)
  "Open a folded drawer in TURN for the call CALL-ID of tool NAME with ARGS."
  (passepartout-chat-render--fresh-line turn)
  (let* ((end (passepartout-turn-end turn))
         (start (marker-position end)))
    (passepartout-chat-render--insert
     turn (format ":TOOL:\n- tool :: %s\n- args :: %s\n" name
                  (passepartout-chat-render--one-line
                   (passepartout-chat-render--value args))))
    (let ((inside (copy-marker end t)))
      (passepartout-chat-render--insert turn ":END:\n")
      (set-marker inside (- (marker-position end) (length ":END:\n")))
      (push (cons (or call-id name) inside) (passepartout-turn-tools turn)))
    (with-current-buffer (marker-buffer end)
      (passepartout-chat-render--fold start))))

(defun passepartout-chat-render--result (turn name call-id ok output)
  "Add the result of call CALL-ID of NAME (OK, OUTPUT) to its drawer in TURN."
  (let* ((entry (or (assoc (or call-id name) (passepartout-turn-tools turn))
                    (assoc name (passepartout-turn-tools turn))))
         (text (concat (format "- result :: %s\n" (if ok "ok" "failed"))
                       (passepartout-chat-render--example
                        (passepartout-chat-render--value (or output ""))))))
    (if (null entry)
        (progn (passepartout-chat-render--call turn name call-id nil)
               (passepartout-chat-render--result turn name call-id ok output))
      (let ((marker (cdr entry)))
        (setf (passepartout-turn-tools turn) (delq entry (passepartout-turn-tools turn)))
        (with-current-buffer (marker-buffer marker)
          (save-excursion
            (goto-char marker)
            (insert (passepartout-inert text))
            (re-search-backward "^:TOOL:" nil t)
            (passepartout-chat-render--fold (point))))
        (set-marker marker nil)))))

(provide 'passepartout-chat-render)
;;; passepartout-chat-render.el ends here
