;;; org_inert_oracle.el --- Open org files as a person would; report what ran  -*- lexical-binding: t; -*-

;;; Commentary:
;; emacs --batch -l org_inert_oracle.el FILE...
;; Each file is visited with org defaults, its file-local variables applied as by a
;; person who allows them all, and the agenda (a week and the todo list) is built over
;; all of them.  Then one line per construct org would evaluate that org-element still
;; finds: "FOUND FILE TYPE TEXT".  What the files' sexps do when run is for the caller
;; to see (they write marker files).

;;; Code:

(require 'org)
(require 'org-element)
(require 'org-agenda)

(prefer-coding-system 'utf-8)

(defconst org-inert-oracle--safe-links
  '("http" "https" "ftp" "mailto" "file" "id" "doi" "news" "attachment" "info" "help"
    "man" "passepartout" "fuzzy" "custom-id" "radio" "coderef")
  "Link types that open something and run nothing.")

(let ((files command-line-args-left)
      (enable-local-variables :all)
      (enable-local-eval t)
      (org-link-elisp-confirm-function nil)
      (org-link-shell-confirm-function nil))
  (setq command-line-args-left nil)
  (dolist (file files)
    (with-current-buffer (find-file-noselect file)
      (hack-local-variables)))
  (let ((org-agenda-files files))
    (org-agenda-list nil "2026-01-01" 'week)
    (org-todo-list))
  (dolist (file files)
    (with-current-buffer (find-file-noselect file)
      (let ((tree (org-element-parse-buffer))
            (name (file-name-nondirectory file)))
        (org-element-map tree '(babel-call inline-babel-call inline-src-block diary-sexp
                                macro keyword src-block link timestamp)
          (lambda (e)
            (let ((type (org-element-type e)))
              (when (pcase type
                      ('keyword (not (member (org-element-property :key e)
                                             '("TITLE" "TODO" "STARTUP"))))
                      ('src-block (not (member (org-element-property :language e)
                                               '("json" "text" "diff"))))
                      ('link (or (not (member (org-element-property :type e)
                                              org-inert-oracle--safe-links))
                                 (and (equal (org-element-property :type e) "fuzzy")
                                      (string-match-p
                                       "\\`[[:alnum:]_+.-]+\\(?::\\|\\'\\)"
                                       (org-element-property :path e)))))
                      ('timestamp (eq (org-element-property :type e) 'diary))
                      (_ t))
                (princ (format "FOUND %s %s %S\n" name type
                               (buffer-substring (org-element-property :begin e)
                                                 (min (org-element-property :end e)
                                                      (+ 60 (org-element-property
                                                             :begin e))))))))))
        (goto-char (point-min))
        (when (re-search-forward (concat "-\\*-\\|Local" " Variables:\\|<%%(\\|\\[%%(") nil t)
          (princ (format "FOUND %s text %S\n" name (match-string 0)))))
      (set-buffer-modified-p nil))))

;;; org_inert_oracle.el ends here
