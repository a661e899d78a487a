;;; passepartout-menu-test.el --- Tests of the menu and the autoloads  -*- lexical-binding: t; -*-

;;; Commentary:

;; The transient menu holds every command of the package and each entry
;; calls its command; a fresh Emacs finds `passepartout-chat-resume' and
;; the other entry points through their autoloads.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-menu)

(defconst passepartout-menu-test-not-in-menu
  '(passepartout-menu passepartout-chat-mode)
  "Commands that need no entry: the menu itself, and the mode of chat buffers.")

(defun passepartout-menu-test--package-commands ()
  "Every interactive command defined by a file of elisp/."
  (let ((dir (file-name-as-directory (expand-file-name "elisp" passepartout-test-root)))
        found)
    (dolist (file (directory-files dir t "\\`passepartout.*\\.el\\'"))
      (load file nil t))
    (mapatoms
     (lambda (symbol)
       (when (and (commandp symbol)
                  (string-match-p "passepartout" (symbol-name symbol))
                  (not (memq symbol passepartout-menu-test-not-in-menu)))
         (let ((file (symbol-file symbol 'defun)))
           (when (and file (string-prefix-p dir (expand-file-name file)))
             (push symbol found))))))
    found))

(ert-deftest passepartout-menu-test-every-command-has-an-entry ()
  "Each command of the package is in the menu; each entry is a documented command."
  (let ((entries (passepartout-menu-commands)))
    (should (> (length entries) 10))
    (dolist (entry entries)
      (should (commandp (cdr entry)))
      (should (documentation (cdr entry))))
    (should (equal (length entries) (length (delete-dups (mapcar #'car (copy-sequence entries))))))
    (dolist (command (passepartout-menu-test--package-commands))
      (should (or (rassq command entries) (list command "has no entry in the menu"))))))

(ert-deftest passepartout-menu-test-keys-call-their-commands ()
  "Opening the menu binds each key to its command, and the key's command runs."
  (let ((called nil))
    (with-temp-buffer
      (call-interactively #'passepartout-menu)
      (unwind-protect
          (progn
            (dolist (entry (passepartout-menu-commands))
              (unless (member (car entry) '("s" "k"))
                (should (eq (lookup-key transient--transient-map (kbd (car entry)))
                            (cdr entry)))))
            ;; Sending and cancelling are offered in a chat buffer only.
            (should-not (commandp (lookup-key transient--transient-map (kbd "s"))))
            (cl-letf (((symbol-function 'passepartout-status)
                       (lambda () (interactive) (setq called 'status))))
              (call-interactively (lookup-key transient--transient-map (kbd "i")))))
        (transient-quit-all)))
    (should (eq called 'status))
    (with-temp-buffer
      (org-mode)
      (cl-letf (((symbol-function 'passepartout-call) #'ignore)
                ((symbol-function 'passepartout-live-p) #'ignore))
        (passepartout-chat-mode 1))
      (call-interactively #'passepartout-menu)
      (unwind-protect
          (should (eq (lookup-key transient--transient-map (kbd "s")) 'passepartout-chat-send))
        (transient-quit-all)
        (set-buffer-modified-p nil)))))

(defun passepartout-menu-test--fresh-emacs (&rest forms)
  "Run FORMS in a fresh `emacs -Q --batch -L elisp'; return (STATUS . OUTPUT)."
  (with-temp-buffer
    (let* ((default-directory passepartout-test-root)
           (status (apply #'call-process (expand-file-name invocation-name invocation-directory)
                          nil t nil "-Q" "--batch" "-L" "elisp"
                          (cl-mapcan (lambda (form) (list "--eval" (prin1-to-string form)))
                                     forms))))
      (cons status (buffer-string)))))

(ert-deftest passepartout-menu-test-resume-autoloaded-in-a-fresh-emacs ()
  "A fresh Emacs knows the entry points from the autoloads alone."
  (let* ((directory (make-temp-file "passepartout-autoloads-" t))
         (loaddefs (expand-file-name "passepartout-autoloads.el" directory)))
    (unwind-protect
        (let ((result
               (passepartout-menu-test--fresh-emacs
                `(progn
                   (require 'autoload)
                   (if (fboundp 'loaddefs-generate)  ; Emacs 29 and later
                       (loaddefs-generate "elisp" ,loaddefs)
                     (make-directory-autoloads "elisp" ,loaddefs))
                   (load ,loaddefs nil t)
                   (dolist (command '(passepartout-chat passepartout-chat-resume
                                                        passepartout-chat-new passepartout-menu
                                                        passepartout-context-show
                                                        passepartout-approvals passepartout-cost))
                     (unless (and (commandp command)
                                  (autoloadp (symbol-function command)))
                       (error "Not autoloaded: %s" command)))
                   (when (featurep 'passepartout-chat) (error "Loaded too early"))
                   (princ "autoloads ok\n")))))
          (should (equal (car result) 0))
          (should (string-match-p "autoloads ok" (cdr result))))
      (delete-directory directory t)))
  ;; The documented set-up (-l passepartout) gives the same commands.
  (let ((result (passepartout-menu-test--fresh-emacs
                 '(progn
                    (require 'passepartout)
                    (setq passepartout-chat-session-files-file
                          (make-temp-file "passepartout-sessions-"))
                    ;; An org file that is no chat does not load the chat code.
                    (let ((notes (make-temp-file "notes-" nil ".org" "* A note\n")))
                      (with-current-buffer (find-file-noselect notes)
                        (when (featurep 'passepartout-chat) (error "Chat loaded"))
                        (kill-buffer)))
                    ;; A saved chat is a chat again when visited, unmodified.
                    (let ((chat (make-temp-file
                                 "chat-" nil ".org"
                                 "#+passepartout_session: 0123abcd\n\n* You\n")))
                      (with-current-buffer (find-file-noselect chat)
                        (unless (and passepartout-chat-mode
                                     (equal passepartout-chat--session "0123abcd")
                                     (not (buffer-modified-p)))
                          (error "Not a chat again"))
                        (kill-buffer)))
                    (dolist (command '(passepartout-chat-resume passepartout-menu
                                                                passepartout-chat-new))
                      (unless (commandp command) (error "Unknown: %s" command)))
                    (unless (assoc "passepartout" org-link-parameters)
                      (error "No link type"))
                    (princ "require ok\n")))))
    (should (equal (car result) 0))
    (should (string-match-p "require ok" (cdr result)))))

(provide 'passepartout-menu-test)
;;; passepartout-menu-test.el ends here
