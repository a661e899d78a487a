;;; emacs_package_install.el --- A fresh Emacs installs the package file and chats  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by tests/test_wheel_install.py, twice, in a fresh `user-emacs-directory'
;; (PASSEPARTOUT_TEST_EMACS_DIR): `passepartout-test-install' installs the package
;; file PASSEPARTOUT_TEST_PACKAGE (or `passepartout-test-vc-install' the repository
;; PASSEPARTOUT_TEST_REPO with `package-vc-install', Emacs 29+); `passepartout-test-chat', in a new Emacs,
;; relies on the autoloads alone, opens a file of the project
;; PASSEPARTOUT_TEST_PROJECT, opens the chat from it and sends one prompt; the
;; server is the `passepartout' executable found on `exec-path'.  It prints
;; the header line and the chat buffer.

;;; Code:

(require 'package)

(setq user-emacs-directory (file-name-as-directory (getenv "PASSEPARTOUT_TEST_EMACS_DIR"))
      package-user-dir (expand-file-name "elpa" user-emacs-directory)
      ;; Local files carry no signature: no gpg-agent is started (and left running).
      package-gnupghome-dir (expand-file-name "gnupg" package-user-dir)
      package-check-signature nil
      package-archives nil)

(defun passepartout-test-install ()
  "Install the package file."
  (package-initialize)
  (package-install-file (getenv "PASSEPARTOUT_TEST_PACKAGE"))
  (princ (format "installed: %S\n" (package-installed-p 'passepartout))))

(defun passepartout-test-vc-install ()
  "Install the package from the repository PASSEPARTOUT_TEST_REPO, as Emacs 29+ does."
  (package-initialize)
  (package-vc-install `(passepartout :url ,(getenv "PASSEPARTOUT_TEST_REPO")
                                     :lisp-dir "elisp"))
  (princ (format "installed: %S\n" (package-installed-p 'passepartout)))
  (with-current-buffer (get-buffer-create byte-compile-log-buffer)
    (princ (format "compile log:\n%s\n" (buffer-string)))))

(defvar passepartout-test--ended nil "The turn that ended, once it has.")

(defun passepartout-test-chat ()
  "Chat once from a file of the project, through the autoloads alone."
  (package-initialize)
  (princ (format "autoload: %S\n" (autoloadp (symbol-function 'passepartout-chat))))
  (find-file (expand-file-name "notes.txt" (getenv "PASSEPARTOUT_TEST_PROJECT")))
  (let ((chat (passepartout-chat)))
    (add-hook 'passepartout-chat-turn-end-functions
              (lambda (turn) (setq passepartout-test--ended turn)))
    (with-current-buffer chat
      (goto-char (point-max))
      (insert "Where do we work?")
      (passepartout-chat-send)
      (let ((deadline (+ (float-time) 90)))
        (while (and (not passepartout-test--ended) (< (float-time) deadline))
          (accept-process-output nil 0.1)))
      (princ (format "ended: %S\n" (and passepartout-test--ended
                                        (passepartout-turn-state passepartout-test--ended))))
      (princ (format "header: %s\n" (passepartout-chat--header-line)))
      (princ (format "cli: %S\n" (passepartout--cli-command "daemon" "--detach")))
      (princ (format "header-line-format: %S\n" header-line-format))
      (princ (format "buffer:\n%s\n" (buffer-string))))))

(provide 'emacs_package_install)
;;; emacs_package_install.el ends here
