;;; org_structure_oracle.el --- Count what org-mode parses in each file  -*- lexical-binding: t; -*-

;;; Commentary:
;; emacs --batch -l org_structure_oracle.el FILE...
;; For each file, one line: FILE headlines keywords drawers property-drawers
;; node-properties planning diary-sexps, as org-element parses it (the file read
;; the way Emacs reads any file: UTF-8, end-of-line style detected).

;;; Code:

(require 'org)
(require 'org-element)

(prefer-coding-system 'utf-8)

(defun org-structure-oracle--count (tree type)
  "How many elements of TYPE are in TREE."
  (length (org-element-map tree type #'identity)))

(dolist (file command-line-args-left)
  (with-temp-buffer
    (insert-file-contents file)
    (let ((org-inhibit-startup t))
      (delay-mode-hooks (org-mode)))
    (let ((tree (org-element-parse-buffer)))
      (princ (format "%s %d %d %d %d %d %d %d\n"
                     (file-name-nondirectory file)
                     (org-structure-oracle--count tree 'headline)
                     (org-structure-oracle--count tree 'keyword)
                     (org-structure-oracle--count tree 'drawer)
                     (org-structure-oracle--count tree 'property-drawer)
                     (org-structure-oracle--count tree 'node-property)
                     (org-structure-oracle--count tree 'planning)
                     (org-structure-oracle--count tree 'diary-sexp))))))

(setq command-line-args-left nil)

;;; org_structure_oracle.el ends here
