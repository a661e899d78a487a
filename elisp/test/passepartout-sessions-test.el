;;; passepartout-sessions-test.el --- Sessions, context, cost and feedback, end to end  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real server and the fake model: the org context of a
;; heading without :ID: holds its body and the chat buffer is never the
;; focus; resuming a session with completion, from a saved file and from
;; an org link; tokens and cost in the header line; the status naming the
;; model; the approvals file and Flight Plan notices; a restart announced.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-org)

(defmacro passepartout-sessions-test-capturing (var &rest body)
  "Run BODY with every `message' text pushed onto VAR."
  (declare (indent 1) (debug t))
  `(cl-letf (((symbol-function 'message)
              (lambda (fmt &rest args)
                (when fmt (push (apply #'format fmt args) ,var)))))
     ,@body))

(defun passepartout-sessions-test--org-file (text)
  "Visit a new temporary org file holding TEXT; return its buffer."
  (let ((file (make-temp-file "passepartout-notes-" nil ".org" text)))
    (with-current-buffer (find-file-noselect file)
      (current-buffer))))

(defun passepartout-sessions-test--kill (buffer)
  "Kill BUFFER and delete its file."
  (when (buffer-live-p buffer)
    (let ((file (buffer-file-name buffer)))
      (with-current-buffer buffer (set-buffer-modified-p nil))
      (kill-buffer buffer)
      (when file (delete-file file)))))

(ert-deftest passepartout-sessions-test-context-holds-the-body-never-the-chat ()
  "A heading without :ID: is sent with its body; the chat buffer is never the focus."
  (passepartout-test-with-shared-server nil
    (let ((notes (passepartout-sessions-test--org-file
                  (concat "* Projects\n** Plan the trip\nBook the train to Lyon.\n"
                          "Ask Marie about the hotel.\n*** A child\nNot part of it.\n")))
          (chat (passepartout-chat)))
      (unwind-protect
          (progn
            (with-current-buffer notes
              (goto-char (point-min))
              (search-forward "Ask Marie")
              (should (equal (plist-get (passepartout-org-focus) :body)
                             "Book the train to Lyon.\nAsk Marie about the hotel."))
              (should-not (plist-get (passepartout-org-focus) :id))
              (passepartout-context-show))
            (with-current-buffer "*passepartout-context*"
              (should (string-match-p "Plan the trip" (buffer-string)))
              (should (string-match-p "Under: Projects" (buffer-string)))
              (should (string-match-p "Ask Marie about the hotel\\." (buffer-string)))
              (should-not (string-match-p "Not part of it" (buffer-string))))
            (with-current-buffer chat
              ;; The chat is an org buffer, yet never the focus, even with the mode on.
              (should (derived-mode-p 'org-mode))
              (should-not (passepartout-org-focus))
              (passepartout-org-mode 1)
              (let ((sent nil))
                (cl-letf (((symbol-function 'passepartout-org--send)
                           (lambda (method plist) (push (cons method plist) sent))))
                  (passepartout-org--send-focus))
                (should-not sent))
              (passepartout-context-show))
            (with-current-buffer "*passepartout-context*"
              (should (string-match-p "Ask Marie" (buffer-string)))
              (should-not (string-match-p "\\* You" (buffer-string)))))
        (passepartout-sessions-test--kill notes)
        (when (get-buffer "*passepartout-context*")
          (kill-buffer "*passepartout-context*"))))))

(ert-deftest passepartout-sessions-test-resume-with-completion-file-and-link ()
  "Resuming completes over titles; a saved chat reopens its file; a link opens it."
  (let* ((directory (make-temp-file "passepartout-chats-" t))
         (passepartout-chat-session-files-file (expand-file-name "sessions.eld" directory))
         (saved (expand-file-name "trip-chat.org" directory)))
    (unwind-protect
        (passepartout-test-with-shared-server '(((text . "Lyon is lovely.")))
          (let* ((buffer (passepartout-chat t))
                 (turn (passepartout-test-prompt buffer "Which city for the trip?"))
                 (session (passepartout-turn-session turn))
                 (offered nil))
            (should (eq (passepartout-test-wait-turn turn) 'done))
            (with-current-buffer buffer (write-file saved))
            (kill-buffer buffer)
            ;; Completion shows the title, the last activity and the saved file.
            (cl-letf (((symbol-function 'completing-read)
                       (lambda (_prompt collection &rest _)
                         (setq offered (all-completions "" collection))
                         (cl-find-if (lambda (c) (string-match-p "Which city" c)) offered))))
              (call-interactively #'passepartout-chat-resume))
            (let ((mine (cl-find-if (lambda (c) (string-match-p "Which city" c)) offered)))
              (should mine)
              (should (string-match-p "Which city for the trip\\?  ([0-9]\\{4\\}-" mine))
              (should (string-match-p "trip-chat\\.org" mine))
              (should (string-match-p (regexp-quote session) mine)))
            (should (equal (buffer-file-name) saved))
            (should passepartout-chat-mode)
            (should (equal passepartout-chat--session session))
            (kill-buffer (current-buffer))
            ;; Visiting the saved file makes it a chat again.
            (with-current-buffer (find-file-noselect saved)
              (should passepartout-chat-mode)
              (should (equal passepartout-chat--session session))
              (should-not (buffer-modified-p))
              (kill-buffer (current-buffer)))
            ;; An org link opens the session.
            (with-temp-buffer
              (org-mode)
              (insert "[[passepartout:" session "][the trip chat]]")
              (goto-char (point-min))
              (org-open-at-point))
            (let ((opened (gethash session passepartout-chat--sessions)))
              (should (buffer-live-p opened))
              (should (equal (buffer-file-name opened) saved))
              (should (string-match-p "Lyon is lovely" (with-current-buffer opened
                                                          (buffer-string)))))
            (should-error (passepartout-chat-resume "bad id\n* injected")
                          :type 'user-error)))
      (dolist (buffer (buffer-list))
        (when (equal (buffer-file-name buffer) saved)
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer)))
      (delete-directory directory t))))

(ert-deftest passepartout-sessions-test-saved-chat-runs-nothing ()
  "A reply holding every construct org runs, saved and resumed, runs nothing.
Its drawer is no drawer of the reply's heading, streamed or resumed."
  (let* ((directory (make-temp-file "passepartout-chats-" t))
         (passepartout-chat-session-files-file (expand-file-name "sessions.eld" directory))
         (saved (expand-file-name "hostile-chat.org" directory))
         (resumed (expand-file-name "resumed-chat.org" directory)))
    (unwind-protect
        (passepartout-test-with-shared-server `(((text . ,passepartout-test-hostile)))
          (let* ((buffer (passepartout-chat t))
                 (turn (passepartout-test-prompt buffer "Draft the hostile reply"))
                 (session (passepartout-turn-session turn)))
            (should (eq (passepartout-test-wait-turn turn) 'done))
            (with-current-buffer buffer (write-file saved))
            (kill-buffer buffer)
            (passepartout-test-assert-inert saved)
            ;; The history the server gives back is shown the same way.
            (let ((again (passepartout-chat--resume-from-server session)))
              (passepartout-test-wait
               (lambda () (with-current-buffer again
                            (string-search "Not a heading" (buffer-string))))
               30 "the resumed history")
              (with-current-buffer again
                (write-region (point-min) (point-max) resumed)
                (set-buffer-modified-p nil))
              (kill-buffer again))
            (passepartout-test-assert-inert resumed)))
      (delete-directory directory t))))

(ert-deftest passepartout-sessions-test-header-line-cost ()
  "The header line shows the turn's, the session's and today's tokens and cost."
  (passepartout-test-with-shared-server
      '(((text . "Counted.") (usage . ((prompt_tokens . 70) (completion_tokens . 5))))
        ((text . "Again.") (usage . ((prompt_tokens . 90) (completion_tokens . 2)))))
    (let* ((buffer (passepartout-chat t))
           (turn (passepartout-test-prompt buffer "Count me")))
      (should (eq (passepartout-test-wait-turn turn) 'done))
      (with-current-buffer buffer
        (passepartout-test-wait
         (lambda () (string-match-p "turn \\$[0-9.]+, 75 tok" (passepartout-chat--header-line)))
         15 "the turn's usage in the header line")
        (should (string-match-p "session \\$[0-9.]+, 75 tok" (passepartout-chat--header-line)))
        (should (string-match-p "today \\$[0-9.]+, [0-9]+ tok" (passepartout-chat--header-line)))
        (should (equal header-line-format '(:eval (passepartout-chat--header-line)))))
      (let ((next (passepartout-test-prompt buffer "Once more")))
        (should (eq (passepartout-test-wait-turn next) 'done))
        (with-current-buffer buffer
          (passepartout-test-wait
           (lambda () (string-match-p "turn \\$[0-9.]+, 92 tok"
                                      (passepartout-chat--header-line)))
           15 "the second turn's usage")
          (should (string-match-p "session \\$[0-9.]+, 167 tok"
                                  (passepartout-chat--header-line)))
          (should (string-match-p "session \\$[0-9.]+, 167 tok"
                                  (passepartout-cost passepartout-chat--session))))))))

(ert-deftest passepartout-sessions-test-status-approvals-and-notices ()
  "The status names the model and provider; a Flight Plan notice points to its file."
  (passepartout-test-with-shared-server nil
    (let ((messages nil))
      (passepartout-sessions-test-capturing messages
        (passepartout-status)
        (passepartout-test-wait (lambda () messages) 15 "the status"))
      (should (string-match-p "Passepartout: ready, healthy, model openai/fake-model (openai)"
                              (car messages))))
    (let* ((file (plist-get passepartout--last-status :approvals-file))
           (buffer nil))
      (should (stringp file))
      (unwind-protect
          (progn
            (with-temp-file file (insert "* Flight Plans\n"))
            (setq buffer (passepartout-approvals))
            (should (equal (buffer-file-name buffer) file))
            (should (buffer-local-value 'auto-revert-mode buffer))
            (with-temp-file file (insert "* Flight Plans\n** PENDING fp-1 shell ls\n"))
            (let ((messages nil))
              (passepartout-sessions-test-capturing messages
                (passepartout--on-notify
                 'info (format "denied shell: waiting for approval in %s (Flight Plan fp-1)"
                               file)))
              (should (string-match-p "M-x passepartout-approvals opens it" (car messages))))
            (with-current-buffer buffer
              (should (string-match-p "PENDING fp-1" (buffer-string)))))
        (when (buffer-live-p buffer) (kill-buffer buffer))
        (delete-file file)))))

(ert-deftest passepartout-sessions-test-restart-is-announced ()
  "A restart says it is starting, how long, then that it is ready and with which model."
  (passepartout-test-with-shared-server nil
    (let ((messages nil))
      (passepartout-sessions-test-capturing messages
        (passepartout-restart)
        (should (passepartout-wait-ready passepartout-test-server-timeout))
        (passepartout-test-wait
         (lambda () (cl-some (lambda (m) (string-match-p "started in" m)) messages))
         30 "the ready announcement"))
      (should (member "Passepartout: starting the server..." messages))
      ;; Notices other tests left unseen may be counted before the time.
      (should (cl-some (lambda (m) (string-match-p
                                    (concat "ready, healthy, model openai/fake-model (openai)"
                                            "\\(; [^(]*(M-x passepartout-notices)\\)?"
                                            " (started in [0-9.]+ s)")
                                    m))
                       messages)))
    ;; While the server starts, a chat's turn shows it rather than "thinking".
    (let ((buffer (passepartout-chat t)))
      (passepartout-stop)
      (passepartout-start)
      (with-current-buffer buffer
        (let ((turn (passepartout-chat--open-turn "Are you there?")))
          (should (eq (passepartout-chat-state buffer) 'starting))
          (should (string-match-p "starting the server" (passepartout-chat--mode-line)))
          (passepartout-turn-advance turn 'cancel)))
      (should (passepartout-wait-ready passepartout-test-server-timeout)))))

(provide 'passepartout-sessions-test)
;;; passepartout-sessions-test.el ends here
