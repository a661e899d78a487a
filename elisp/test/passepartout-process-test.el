;;; passepartout-process-test.el --- Tests of starting and stopping the server  -*- lexical-binding: t; -*-

;;; Commentary:

;; A server that cannot start (it exits, prints garbage instead of its
;; port, or never prints anything) gives a warning with the command, the
;; interpreter and its last lines; the token reaches it on stdin, not in
;; the environment; and a stopped server leaves no process behind.

;;; Code:

(require 'passepartout-test-helpers)

(defmacro passepartout-process-test-with-sh (script &rest body)
  "Run BODY with the \"server\" being sh running SCRIPT; warnings in `warnings'.
A server an earlier test left running (the shared one) is stopped first."
  (declare (indent 1) (debug t))
  `(progn
     (passepartout-stop)
     (let ((passepartout-python-command "sh")
           (passepartout--stop-grace 0.1)
           (passepartout-server-args (list "-c" ,script))
           (warnings nil))
       (cl-letf (((symbol-function 'display-warning)
                  (lambda (_type text &rest _) (push text warnings))))
         (unwind-protect (progn ,@body)
           (passepartout-stop))))))

(ert-deftest passepartout-process-test-exit-during-start-warns ()
  "A server that exits at start: warning with command, interpreter, last lines."
  (passepartout-process-test-with-sh "echo 'Traceback: no module named passepartout' >&2; exit 3"
    (passepartout-start)
    (passepartout-test-wait (lambda () (eq (passepartout-state) 'error)) 10 "the failure")
    (should (= (length warnings) 1))
    (let ((text (car warnings)))
      (should (string-match-p "exited during start" text))
      (should (string-match-p "Command: sh -c " text))
      (should (string-match-p "Interpreter: .*sh" text))
      (should (string-match-p "no module named passepartout" text)))
    (should-not (passepartout-live-p))))

(ert-deftest passepartout-process-test-garbage-instead-of-port ()
  "Anything but a port on the first stdout line stops the start."
  (passepartout-process-test-with-sh "echo 'Welcome to litellm!'; sleep 30"
    (passepartout-start)
    (passepartout-test-wait (lambda () (eq (passepartout-state) 'error)) 10 "the failure")
    (should (string-match-p "printed \"Welcome to litellm!\" instead of its port"
                            (car warnings)))
    (should-not (process-live-p passepartout--process))))

(ert-deftest passepartout-process-test-silent-server-times-out ()
  "A server that never prints its port is given up after the start timeout."
  (let ((passepartout-start-timeout 0.5))
    (passepartout-process-test-with-sh "sleep 30"
      (passepartout-start)
      (passepartout-test-wait (lambda () (eq (passepartout-state) 'error)) 10 "the timeout")
      (should (string-match-p "did not start within 0.5 seconds" (car warnings))))))

(ert-deftest passepartout-process-test-token-on-stdin ()
  "The server gets a fresh 64-hex-digit token on stdin, none in its environment."
  (let ((file (make-temp-file "passepartout-token-"))
        (process-environment (cons "PASSEPARTOUT_TOKEN=stale" process-environment)))
    (unwind-protect
        (passepartout-process-test-with-sh
            (concat "read -r t; printf '%s %s' \"$t\" \"${PASSEPARTOUT_TOKEN-unset}\""
                    " > " (shell-quote-argument file) "; sleep 30")
          (let ((passepartout-start-timeout 30))
            (passepartout-start)
            (passepartout-test-wait
             (lambda () (> (file-attribute-size (file-attributes file)) 0)) 10 "the token")
            (let ((first (with-temp-buffer (insert-file-contents file) (buffer-string))))
              (should (string-match-p "\\`[0-9a-f]\\{64\\} unset\\'" first))
              (passepartout-stop)
              (should (eq (passepartout-state) 'stopped))
              (write-region "" nil file)
              (passepartout-start)
              (passepartout-test-wait
               (lambda () (> (file-attribute-size (file-attributes file)) 0)) 10 "the token")
              (should-not (equal first (with-temp-buffer (insert-file-contents file)
                                                         (buffer-string)))))))
      (delete-file file))))

(ert-deftest passepartout-process-test-stop-leaves-nothing ()
  "After `passepartout-stop' no process of the server is left."
  (let ((passepartout-start-timeout 30))
    (passepartout-process-test-with-sh "sleep 30"
      (passepartout-start)
      (should (process-live-p passepartout--process))
      (let ((process passepartout--process))
        (should-not (process-query-on-exit-flag process))
        (passepartout-stop)
        (should-not (process-live-p process))
        (should-not (cl-some (lambda (p) (string-prefix-p "passepartout" (process-name p)))
                             (process-list)))))))

(ert-deftest passepartout-process-test-calls-queue-until-ready ()
  "A call made before the server is ready waits, and fails when the start fails."
  (passepartout-process-test-with-sh "exit 1"
    (let ((failure nil))
      (passepartout-call 'ping nil #'ignore (lambda (err) (setq failure err)))
      (should (memq (passepartout-state) '(starting error)))
      (passepartout-test-wait (lambda () failure) 10 "the queued call to fail")
      (should (eq (car failure) 'connection-closed))
      (should-not passepartout--queue))))

(ert-deftest passepartout-process-test-daemon-that-cannot-start-warns ()
  "With no daemon running, a failing `daemon --detach': a warning with its words.
Calls made meanwhile fail, and nothing is left running."
  (passepartout-stop)
  (let* ((runtime (make-temp-file "/tmp/ppd-" t))
         (passepartout-server-lifetime 'persistent)
         (passepartout--daemon-directory nil)
         (passepartout-python-command "sh")
         (passepartout-cli-args
          (list "-c" "echo 'passepartout daemon: others may enter /x: chmod 700 it' >&2; exit 2"
                "sh"))
         (passepartout-server-environment (list (concat "XDG_RUNTIME_DIR=" runtime)))
         (warnings nil)
         (failure nil))
    (set-file-modes runtime #o700)
    (cl-letf (((symbol-function 'display-warning)
               (lambda (_type text &rest _) (push text warnings))))
      (unwind-protect
          (progn
            (passepartout-call 'ping nil #'ignore (lambda (err) (setq failure err)))
            (should (eq (passepartout-state) 'starting))
            (passepartout-test-wait (lambda () (eq (passepartout-state) 'error)) 10 "the failure")
            (should (string-match-p "The daemon did not start (status 2): passepartout daemon: others may enter /x"
                                    (car warnings)))
            (should (string-match-p "Command: sh -c .* daemon --detach" (car warnings)))
            (should (eq (car failure) 'connection-closed))
            (should-not (process-live-p passepartout--helper)))
        (passepartout-stop)
        (delete-directory runtime t)))))

(provide 'passepartout-process-test)
;;; passepartout-process-test.el ends here
