;;; package-tar.el --- Make the Passepartout package file  -*- lexical-binding: t; -*-

;;; Commentary:

;; From the repository root (`make package-el'):
;;
;;   `emacs -Q --batch -l elisp/scripts/package-tar.el
;;          -f passepartout-package-tar DIRECTORY'
;;
;; Writes DIRECTORY/passepartout-VERSION.tar, a multi-file package as
;; `package-install-file' takes it: the files of elisp/ and the
;; passepartout-pkg.el made from the headers of passepartout.el.  Prints
;; the file's name.

;;; Code:

(require 'package)

(defun passepartout-package-tar ()
  "Write the package tar file into the directory named on the command line."
  (let* ((out (file-name-as-directory (expand-file-name (car command-line-args-left))))
         (desc (with-temp-buffer
                 (insert-file-contents "elisp/passepartout.el")
                 (package-buffer-info)))
         (name (format "passepartout-%s" (package-version-join (package-desc-version desc))))
         (stage (make-temp-file "passepartout-package" t))
         (dir (expand-file-name name stage))
         (tar (expand-file-name (concat name ".tar") out)))
    (setq command-line-args-left (cdr command-line-args-left))
    (unwind-protect
        (progn
          (make-directory dir)
          (make-directory out t)
          (dolist (file (directory-files "elisp" t "\\`passepartout[-a-z]*\\.el\\'"))
            (copy-file file (expand-file-name (file-name-nondirectory file) dir)))
          (package-generate-description-file
           desc (expand-file-name "passepartout-pkg.el" dir))
          (unless (zerop (call-process "tar" nil nil nil "-C" stage "-cf" tar name))
            (error "Tar failed to write %s" tar))
          (princ (concat tar "\n")))
      (delete-directory stage t))))

(provide 'package-tar)
;;; package-tar.el ends here
