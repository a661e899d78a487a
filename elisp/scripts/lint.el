;;; lint.el --- Checkdoc and package-lint for the Passepartout package  -*- lexical-binding: t; -*-

;;; Commentary:

;; From the repository root:
;;
;;   `emacs -Q --batch -L elisp -l elisp/scripts/lint.el
;;          -f passepartout-lint elisp/*.el'
;;
;; Runs checkdoc on every file given and exits non-zero on any warning.
;; When package-lint is installed (Debian: elpa-package-lint), it is run on
;; the main file too.

;;; Code:

(require 'checkdoc)
(require 'package)

(declare-function package-lint-buffer "package-lint" (&optional buffer))

(defvar passepartout-lint--problems nil
  "The problems found, as strings.")

(defun passepartout-lint--collect (text start _end &optional _unfixable)
  "Record the checkdoc problem TEXT found at START."
  (push (format "%s:%d: %s" (buffer-file-name) (line-number-at-pos start) text)
        passepartout-lint--problems)
  nil)

(defun passepartout-lint--checkdoc (file)
  "Run checkdoc on FILE."
  (with-current-buffer (find-file-noselect file)
    (let ((checkdoc-create-error-function #'passepartout-lint--collect)
          (checkdoc-autofix-flag 'never)
          (checkdoc-spellcheck-documentation-flag nil))
      (checkdoc-current-buffer t))))

(defun passepartout-lint--load-package-lint ()
  "Load package-lint from Debian's elpa-package-lint or from `package-user-dir'."
  (require 'package)
  (when (file-directory-p "/usr/share/emacs/site-lisp/elpa")
    (add-to-list 'package-directory-list "/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  (require 'package-lint nil t))

(defun passepartout-lint--package-lint (file)
  "Run package-lint on FILE when it is installed."
  (when (passepartout-lint--load-package-lint)
    (with-current-buffer (find-file-noselect file)
      (dolist (issue (package-lint-buffer))
        (let ((text (format "%s:%d: %s: %s" file (nth 0 issue) (nth 2 issue) (nth 3 issue))))
          ;; Without archive contents (offline) package-lint cannot see that a
          ;; dependency such as org is installable: say so, do not fail on it.
          (if (and (null package-archive-contents)
                   (string-match-p "not installable\\|uninstallable" (nth 3 issue)))
              (message "lint: note (no package archives here): %s" text)
            (push text passepartout-lint--problems)))))))

(defun passepartout-lint ()
  "Lint the files named on the command line; exit 1 on any problem."
  (dolist (file command-line-args-left)
    (passepartout-lint--checkdoc file)
    (when (string-suffix-p "/passepartout.el" (expand-file-name file))
      (passepartout-lint--package-lint file)))
  (setq command-line-args-left nil)
  (dolist (problem (reverse passepartout-lint--problems))
    (message "%s" problem))
  (message "lint: %d problem(s)" (length passepartout-lint--problems))
  (kill-emacs (if passepartout-lint--problems 1 0)))

;;; lint.el ends here
