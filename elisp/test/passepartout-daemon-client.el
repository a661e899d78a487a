;;; passepartout-daemon-client.el --- One Emacs client of the daemon, for tests  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by tests/test_daemon_emacs.py, several at once against one daemon:
;;
;;   `emacs -Q --batch -L elisp -L elisp/test -l passepartout-daemon-client.el'
;;
;; In the daemon's environment, with CLIENT_NAME, CLIENT_MODEL (the model
;; its turn asks for, so the fake model can script each client's replies),
;; CLIENT_PROMPT, CLIENT_ANSWER ("yes" or "no": how it answers approvals),
;; CLIENT_DONE (a file it makes once its turn has ended) and CLIENT_RELEASE
;; (a file: the client stays attached until it exists).
;; It attaches, sends its prompt from a chat buffer, answers the approvals
;; it is asked, and prints one line per fact on stdout:
;;
;;   DAEMON <pid>      ASKED <description>      REPLY <text, one line>
;;   NOTICE <text>     DETACHED
;;
;; Exit status 0 when the turn ended as done, else 1.

;;; Code:

(require 'passepartout-test-helpers)

(setq passepartout-server-lifetime 'persistent
      passepartout-python-command passepartout-test-python
      passepartout-server-directory passepartout-test-root
      passepartout-chat-buffer-name "*passepartout-client*"
      passepartout-model (getenv "CLIENT_MODEL")
      passepartout-approval-function
      (lambda (description _info)
        (princ (format "ASKED %s\n" (replace-regexp-in-string "\n" " " description)))
        (equal (getenv "CLIENT_ANSWER") "yes")))

(advice-add 'passepartout--on-notify :before
            (lambda (_level text)
              (princ (format "NOTICE %s\n" (replace-regexp-in-string "\n" " " (format "%s" text))))))

(defun passepartout-daemon-client-run ()
  "Attach, chat, wait for the release file, detach; exit 0 when the turn was done."
  (let ((status 1))
    (unwind-protect
        (progn
          (passepartout-start)
          (unless (passepartout-wait-ready 60)
            (error "Not attached: %s" (passepartout--log-tail 20)))
          (princ (format "DAEMON %s\n" (plist-get passepartout--daemon :pid)))
          (let* ((buffer (passepartout-chat))
                 (turn (passepartout-test-prompt buffer (getenv "CLIENT_PROMPT")))
                 (state (passepartout-test-wait-turn turn 60)))
            (princ (format "REPLY %s\n" (replace-regexp-in-string
                                         "\n" " " (passepartout-turn-reply turn))))
            (write-region "" nil (getenv "CLIENT_DONE"))
            (when (eq state 'done) (setq status 0)))
          (let ((release (getenv "CLIENT_RELEASE")))
            (passepartout-test-wait (lambda () (file-exists-p release)) 60 "the release")
            (accept-process-output nil 0.2)))
      (passepartout-stop)
      (princ "DETACHED\n"))
    (kill-emacs status)))

(passepartout-daemon-client-run)

(provide 'passepartout-daemon-client)
;;; passepartout-daemon-client.el ends here
