;;; org_drawers_oracle.el --- which headings org-mode reads as :CRON:/:HOOK: jobs -*- lexical-binding: t -*-

;;; Commentary:
;; emacs --batch -Q -l org_drawers_oracle.el FILE...
;; Each FILE is read as Emacs reads an org file in UTF-8 (line ends detected).  For
;; each, one line: the file's name, a TAB, then a JSON object:
;;   "jobs": [[LINE, CRON, HOOK], ...] for every headline where `org-entry-get'
;;           (no inheritance) finds CRON or HOOK, skipping what org's agenda skips:
;;           commented subtrees (`org-in-commented-heading-p'), archived ones
;;           (`org-in-archived-heading-p') and a file tagged ARCHIVE;
;;   "element": [[LINE, KEY...], ...] for every headline whose section, parsed by
;;           `org-element-parse-buffer', holds a property drawer: its keys
;;           (null when that parser fails on the text).
;; LINE counts from 0; a missing value is null.

;;; Code:

(require 'org)
(require 'org-element)
(require 'json)

(defun org-drawers-oracle--jobs ()
  "The [LINE CRON HOOK] of each headline org reads as a job or hook."
  (let (out)
    (goto-char (point-min))
    (while (re-search-forward org-outline-regexp-bol nil t)
      (beginning-of-line)
      (let ((cron (org-entry-get nil "CRON"))
            (hook (org-entry-get nil "HOOK")))
        (when (and (or cron hook)
                   (not (org-in-commented-heading-p))
                   (not (org-in-archived-heading-p))
                   (not (member org-archive-tag org-file-tags)))
          (push (vector (1- (line-number-at-pos)) cron hook) out)))
      (forward-line 1))
    (vconcat (nreverse out))))

(defun org-drawers-oracle--element ()
  "The [LINE KEY...] of each headline whose section starts with a property drawer."
  (vconcat
   (org-element-map (org-element-parse-buffer) 'headline
     (lambda (headline)
       (let* ((section (car (org-element-contents headline)))
              (drawer (and (eq (org-element-type section) 'section)
                           (seq-find (lambda (e) (eq (org-element-type e) 'property-drawer))
                                     (org-element-contents section)))))
         (when drawer
           (vconcat (list (1- (line-number-at-pos (org-element-property :begin headline))))
                    (mapcar (lambda (p) (org-element-property :key p))
                            (org-element-contents drawer)))))))))

(let ((coding-system-for-write 'utf-8-unix))
  (princ (format "ORG\t%s\n" org-version))
  (dolist (file command-line-args-left)
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8))
        (insert-file-contents file))
      (org-mode)
      (princ (format "%s\t%s\n" (file-name-nondirectory file)
                     (json-encode
                      (list (cons "jobs" (org-drawers-oracle--jobs))
                            (cons "element"
                                  ;; org-element's own parser fails on a few odd
                                  ;; texts (a CR inside a timestamp): null then
                                  (condition-case nil
                                      (org-with-wide-buffer (org-drawers-oracle--element))
                                    (error nil))))))))))
(setq command-line-args-left nil)

;;; org_drawers_oracle.el ends here
