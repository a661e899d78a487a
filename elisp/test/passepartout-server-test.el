;;; passepartout-server-test.el --- End-to-end tests against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; The tests share one `python -m passepartout serve' from the project's
;; virtualenv (its model layer loads once), with its state in a temporary
;; directory and the scripted fake OpenAI server of the Python tests as its
;; model, re-scripted by each test; they drive the chat buffer as a person
;; would.  Tests that kill the server restart it.

;;; Code:

(require 'passepartout-test-helpers)

(ert-deftest passepartout-server-test-hello-and-echo ()
  "The handshake succeeds and a call comes back with its value."
  (passepartout-test-with-shared-server nil
    (should (passepartout-live-p))
    (should (equal (passepartout-epc-call-sync passepartout--connection 'echo
                                               (list "é \"quoted\"\nline"))
                   "é \"quoted\"\nline"))
    ;; A megabyte both ways goes as an attachment, in and out.
    (let ((long (apply #'concat (make-list 20000 "ü \"x\" \\ 日本 lorem ipsum dolor\n"))))
      (should (equal (passepartout-epc-call-sync passepartout--connection 'echo
                                                 (list (list long "short")))
                     (list long "short"))))
    (should (passepartout-epc-call-sync passepartout--connection 'ping nil))
    (let ((status (passepartout-epc-call-sync passepartout--connection 'status nil)))
      (should (string-match-p "\\`Passepartout: ready, \\(healthy\\|degraded\\|booting\\)"
                              (passepartout-status-text 'ready status))))))

(defun passepartout-server-test--proc-file (pid name)
  "Return the bytes of /proc/PID/NAME as a unibyte string."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (let ((coding-system-for-read 'binary))
      (insert-file-contents-literally (format "/proc/%d/%s" pid name)))
    (buffer-string)))

(ert-deftest passepartout-server-test-token-not-in-environment ()
  "The server started as `passepartout-start' does keeps no token in its environ.
The token goes on its stdin; /proc/PID/environ (the environment the
process started with, readable for its whole life) and its command line
hold none of it, and the server still accepts it."
  (let* ((tokens nil)
         (random-token (symbol-function 'passepartout--random-token))
         (process-environment (cons "PASSEPARTOUT_TOKEN=stale-from-the-old-hand-over"
                                    process-environment)))
    (cl-letf (((symbol-function 'passepartout--random-token)
               (lambda () (car (push (funcall random-token) tokens)))))
      (passepartout-stop)               ; a fresh start, whose token is seen here
      (passepartout-test-with-shared-server nil
        (should (passepartout-live-p))
        (should (= (length tokens) 1))
        (let* ((pid (process-id passepartout--process))
               (environ (passepartout-server-test--proc-file pid "environ"))
               (cmdline (passepartout-server-test--proc-file pid "cmdline")))
          (should (string-match-p "PASSEPARTOUT_HOME=" environ)) ; the right file, read
          (should-not (string-search (car tokens) environ))
          (should-not (string-search "PASSEPARTOUT_TOKEN" environ))
          (should-not (string-search (car tokens) cmdline))
          (should (eq (passepartout-epc-call-sync passepartout--connection 'ping nil)
                      'pong)))))))

(ert-deftest passepartout-server-test-chat-streams-reply ()
  "A prompt sent from the chat buffer gets its reply streamed into it."
  (passepartout-test-with-shared-server '(((text . "Hello from the fake model, streamed word by word.")))
    (let* ((buffer (passepartout-chat))
           (turn (passepartout-test-prompt buffer "Say hello")))
      (should (memq (passepartout-chat-state buffer) '(thinking streaming)))
      (should (eq (passepartout-test-wait-turn turn) 'done))
      (should (> (passepartout-turn-chunks turn) 1))
      (should (string-match-p "Hello from the fake model, streamed word by word\\."
                              (passepartout-turn-reply turn)))
      (should (eq (passepartout-chat-state buffer) 'idle))
      (with-current-buffer buffer
        ;; A fresh prompt heading waits after the reply.
        (should (string-match-p "\\* Passepartout\nHello from the fake model.*\n\\* You\n\\'"
                                (buffer-string)))))))

(ert-deftest passepartout-server-test-cancel-drops-later-chunks ()
  "After a cancel no chunk of the cancelled turn reaches the buffer."
  (passepartout-test-with-shared-server
      '(((text . "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omega")
         (chunk_delay . 0.15))
        ((text . "second answer")))
    (let* ((buffer (passepartout-chat))
           (turn (passepartout-test-prompt buffer "Count slowly")))
      (passepartout-test-wait (lambda () (>= (passepartout-turn-chunks turn) 2))
                              60 "the first chunks")
      (with-current-buffer buffer (passepartout-chat-cancel))
      (should (eq (passepartout-turn-state turn) 'cancelled))
      (should (eq (passepartout-chat-state buffer) 'idle))
      (let ((text (passepartout-turn-reply turn))
            (chunks (passepartout-turn-chunks turn)))
        (should (string-match-p "Cancelled" text))
        ;; The server ends the cancelled turn with on-done, which is dropped.
        (passepartout-test-wait
         (lambda () (> (buffer-local-value 'passepartout-chat-dropped buffer) 0))
         30 "the cancelled turn's last event")
        (should (equal (passepartout-turn-reply turn) text))
        (should (= (passepartout-turn-chunks turn) chunks))
        (should-not (string-match-p "omega" (with-current-buffer buffer (buffer-string)))))
      ;; The session goes on.
      (let ((next (passepartout-test-prompt buffer "Again")))
        (should (eq (passepartout-test-wait-turn next) 'done))
        (should (string-match-p "second answer" (passepartout-turn-reply next)))))))

(ert-deftest passepartout-server-test-server-death-and-restart ()
  "A server that dies is reported; `passepartout-restart' brings chat back."
  (passepartout-test-with-shared-server '(((text . "after the restart")))
    (let* ((buffer (passepartout-chat))
           (messages nil))
      (cl-letf (((symbol-function 'message)
                 (lambda (fmt &rest args)
                   (when fmt (push (apply #'format fmt args) messages)))))
        (signal-process passepartout--process 'kill)
        (passepartout-test-wait (lambda () (eq (passepartout-state) 'error))
                                15 "the server's death to be noticed"))
      (should (cl-some (lambda (m) (string-match-p "server exited.*passepartout-restart" m))
                       messages))
      (should (eq (passepartout-chat-state buffer) 'error))
      (passepartout-restart)
      (should (passepartout-wait-ready passepartout-test-server-timeout))
      (let ((turn (passepartout-test-prompt buffer "Are you back?")))
        (should (eq (passepartout-test-wait-turn turn) 'done))
        (should (string-match-p "after the restart" (passepartout-turn-reply turn)))
        (should (eq (passepartout-chat-state buffer) 'idle))))))

(ert-deftest passepartout-server-test-death-mid-turn-fails-the-turn ()
  "A turn running when the server dies ends in the error state, saying why."
  (passepartout-test-with-shared-server
      '(((text . "a b c d e f g h i j k l m n o p") (chunk_delay . 0.3)))
    (let* ((buffer (passepartout-chat))
           (turn (passepartout-test-prompt buffer "Go slowly")))
      (passepartout-test-wait (lambda () (eq (passepartout-turn-state turn) 'streaming))
                              60 "the stream")
      (let ((inhibit-message t))
        (signal-process passepartout--process 'kill)
        (passepartout-test-wait (lambda () (not (passepartout-turn-live-p turn)))
                                15 "the turn to fail"))
      (should (eq (passepartout-turn-state turn) 'failed))
      (should (eq (passepartout-chat-state buffer) 'error))
      (should (string-match-p "Error:.*server exited" (passepartout-turn-reply turn))))))

(ert-deftest passepartout-server-test-denied-tool-does-not-run ()
  "A `write-file' proposed by the model and refused by the person does nothing."
  (let* ((target (expand-file-name "should-not-exist.txt"
                                   (make-temp-file "passepartout-target-" t)))
         (asked nil)
         (passepartout-approval-function
          (lambda (description info) (push (list description info) asked) nil)))
    (unwind-protect
        (passepartout-test-with-shared-server
            `(((tool_calls . [((name . "write-file")
                               (arguments . ((path . ,target) (content . "pwned"))))]))
              ((text . "Understood, I did not write the file.")))
          (let* ((buffer (passepartout-chat))
                 (turn (passepartout-test-prompt buffer "Write the file please")))
            (passepartout-test-wait-turn turn)
            (should asked)
            (should (string-match-p "write-file" (format "%S" (car asked))))
            (should-not (file-exists-p target))
            (let ((text (passepartout-turn-reply turn)))
              (should (string-match-p "Not approved:\\|Denied:" text))
              (should (string-match-p "write-file" text)))))
      (delete-directory (file-name-directory target) t))))

(ert-deftest passepartout-server-test-approved-tool-runs-and-shows-drawer ()
  "An approved `write-file' runs; the call and result sit in a :TOOL: drawer."
  (let* ((dir (make-temp-file "passepartout-target-" t))
         (target (expand-file-name "written.txt" dir))
         (passepartout-approval-function (lambda (_description _info) t)))
    (unwind-protect
        (passepartout-test-with-shared-server
            `(((tool_calls . [((name . "write-file")
                               (arguments . ((path . ,target) (content . "hello"))))]))
              ((text . "Done: the file is written.")))
          (let* ((buffer (passepartout-chat))
                 (turn (passepartout-test-prompt buffer "Write it")))
            (should (eq (passepartout-test-wait-turn turn) 'done))
            (should (file-exists-p target))
            (let ((text (passepartout-turn-reply turn)))
              (should (string-match-p ":TOOL:\n- tool :: write-file\n" text))
              (should (string-match-p "- result :: ok" text))
              (should (string-match-p "Done: the file is written\\." text)))
            (with-current-buffer buffer
              (goto-char (point-min))
              (search-forward ":TOOL:")
              (forward-line 1)
              (should (invisible-p (point))))))
      (delete-directory dir t))))

(defvar passepartout-server-test--evaluated nil
  "Set by the Emacs Lisp the fake model asks to evaluate.")

(ert-deftest passepartout-server-test-emacs-eval-asks-twice ()
  "The model's emacs-eval runs only after a second yes, shown the code."
  (let* ((code "(setq passepartout-server-test--evaluated (* 6 7))")
         (questions nil)
         (replies nil)
         (passepartout-approval-function
          (lambda (description info)
            (push (list description info) questions)
            (pop replies))))
    (setq passepartout-server-test--evaluated nil)
    (passepartout-test-with-shared-server
        `(((tool_calls . [((name . "emacs-eval") (arguments . ((code . ,code))))]))
          ((text . "Refused, then."))
          ((tool_calls . [((name . "emacs-eval") (arguments . ((code . ,code))))]))
          ((text . "Evaluated.")))
      (let ((buffer (passepartout-chat)))
        ;; Yes to the server's question, no when Emacs shows the code.
        (setq replies (list t nil))
        (let ((turn (passepartout-test-prompt buffer "Evaluate it")))
          (passepartout-test-wait-turn turn)
          (should (= (length questions) 2))
          (should (string-match-p (regexp-quote code) (car (car questions))))
          (should-not passepartout-server-test--evaluated))
        ;; Yes twice: evaluated in this Emacs, the value goes back as the tool's output.
        (setq replies (list t t) questions nil)
        (let ((turn (passepartout-test-prompt buffer "Evaluate it, really")))
          (should (eq (passepartout-test-wait-turn turn) 'done))
          (should (= passepartout-server-test--evaluated 42))
          (should (string-match-p "- result :: ok\n#\\+begin_example\n42"
                                  (passepartout-turn-reply turn))))))))

(ert-deftest passepartout-server-test-resume-session ()
  "A session's history comes back in a new buffer with `passepartout-chat-resume'."
  (passepartout-test-with-shared-server '(((text . "Remembered reply.")))
    (let* ((buffer (passepartout-chat))
           (turn (passepartout-test-prompt buffer "Remember this"))
           (session (passepartout-turn-session turn)))
      (should (eq (passepartout-test-wait-turn turn) 'done))
      (kill-buffer buffer)
      (let ((resumed (passepartout-chat-resume session)))
        (passepartout-test-wait
         (lambda () (with-current-buffer resumed
                      (string-match-p "Remembered reply\\." (buffer-string))))
         15 "the history")
        (with-current-buffer resumed
          (should (equal passepartout-chat--session session))
          (should (string-match-p "\\* You\nRemember this\n\\* Passepartout\nRemembered reply\\."
                                  (buffer-string))))))))

(provide 'passepartout-server-test)
;;; passepartout-server-test.el ends here
