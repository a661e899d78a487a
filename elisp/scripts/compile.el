;;; compile.el --- Byte-compile Passepartout with warnings as errors  -*- lexical-binding: t; -*-

;;; Commentary:

;; From the repository root:
;;
;;   `emacs -Q --batch -L elisp -L elisp/test -l elisp/scripts/compile.el
;;          -f passepartout-compile elisp/*.el elisp/test/*.el'
;;
;; Compiles each file given with `byte-compile-error-on-warn' on, into a
;; temporary directory (no .elc is left beside the sources to shadow them),
;; and exits non-zero when a file does not compile cleanly.

;;; Code:

(require 'bytecomp)

(defun passepartout-compile ()
  "Byte-compile the files named on the command line; exit 1 on any warning."
  (let* ((target (make-temp-file "passepartout-compile-" t))
         (byte-compile-error-on-warn t)
         (load-prefer-newer t)
         (byte-compile-dest-file-function
          (lambda (file) (expand-file-name (concat (file-name-nondirectory file) "c") target)))
         (failed nil))
    (unwind-protect
        (dolist (file command-line-args-left)
          (unless (byte-compile-file file)
            (push file failed)))
      (delete-directory target t))
    (setq command-line-args-left nil)
    (message "compile: %d file(s) failed%s" (length failed)
             (if failed (concat ": " (mapconcat #'identity (reverse failed) " ")) ""))
    (kill-emacs (if failed 1 0))))

;;; compile.el ends here
