;;; org_reading_oracle.el --- How org itself reads headings and property drawers -*- lexical-binding: t -*-

;;; Commentary:
;; For each org file named on the command line, one line of JSON: for every headline,
;; its line index, level, TODO keyword (as org's commands read it), title (as `org-get-heading' gives it without
;; tags, keyword, priority or comment), tags, and the properties of its property
;; drawer (false when it has none), as `org-element' parses them.

;;; Code:

(require 'org)
(require 'org-element)
(require 'json)
(require 'seq)

(defun org-reading-oracle--drawer (headline)
  "The property drawer of HEADLINE, or nil."
  (let ((section (car (org-element-contents headline))))
    (and (eq (org-element-type section) 'section)
         (seq-find (lambda (e) (eq (org-element-type e) 'property-drawer))
                   (org-element-contents section)))))

(defun org-reading-oracle--headline (headline)
  "One HEADLINE as a JSON-ready vector."
  (let* ((begin (org-element-property :begin headline))
         (drawer (org-reading-oracle--drawer headline)))
    (vector (1- (line-number-at-pos begin))
            (org-element-property :level headline)
            ;; org-element 9.5 wants a space after the keyword, org's commands do not
            (or (save-excursion (goto-char begin) (org-get-todo-state)) :json-false)
            (save-excursion (goto-char begin) (org-get-heading t t t t))
            (vconcat (org-element-property :tags headline))
            (if drawer
                (vconcat (mapcar (lambda (p)
                                   (vector (org-element-property :key p)
                                           (or (org-element-property :value p) "")))
                                 (org-element-contents drawer)))
              :json-false))))

(dolist (file command-line-args-left)
  (with-temp-buffer
    (insert-file-contents file)
    (org-mode)
    (princ (json-encode
            (vconcat (org-element-map (org-element-parse-buffer) 'headline
                       #'org-reading-oracle--headline))))
    (terpri)))
(setq command-line-args-left nil)

;;; org_reading_oracle.el ends here
