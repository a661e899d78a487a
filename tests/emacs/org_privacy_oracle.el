;;; org_privacy_oracle.el --- which lines org-mode reads as private -*- lexical-binding: t -*-

;;; Commentary:
;; emacs --batch -Q -l org_privacy_oracle.el TAG FILE...
;; For each FILE (org text in UTF-8, lines split on LF), prints one line:
;; the file's name, a TAB, then one character per line of the file: 1 when the
;; line carries TAG for org (`org-get-tags' with inheritance; before the first
;; heading, `org-file-tags'), else 0.

;;; Code:

(require 'org)

(defun org-privacy-oracle-bits (tag)
  "One character per line of the buffer: 1 when the line carries TAG."
  (let ((count (1+ (how-many "\n" (point-min) (point-max))))
        (bits nil))
    (goto-char (point-min))
    (dotimes (_ count)
      (push (if (member tag (if (org-before-first-heading-p)
                                org-file-tags
                              (org-get-tags)))
                "1" "0")
            bits)
      (forward-line 1))
    (apply #'concat (nreverse bits))))

(let* ((args command-line-args-left)
       (tag (car args)))
  (setq command-line-args-left nil)
  (princ (format "ORG\t%s\n" org-version))
  (dolist (file (cdr args))
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8-unix))
        (insert-file-contents file))
      (org-mode)
      (princ (format "%s\t%s\n" (file-name-nondirectory file)
                     (org-privacy-oracle-bits tag))))))

;;; org_privacy_oracle.el ends here
