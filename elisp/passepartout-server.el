;;; passepartout-server.el --- The Passepartout server process and calls to it  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: processes
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; The server's life: `passepartout-start' runs the Python server, writes
;; a fresh token as the first line of its stdin (never in its environment,
;; which /proc/PID/environ keeps readable for the process's life), reads
;; its port from the first line of stdout, connects and says `hello' with
;; the token; `passepartout-stop'
;; closes its stdin (it saves and exits) and `passepartout-restart' does
;; both.  The server's stderr goes to the *passepartout-log* buffer; a
;; server that fails to start gives a warning with the command, the
;; interpreter and the last lines it printed; one that dies later is
;; reported and leaves the state `error'.  `passepartout-call' is how the
;; rest of the package calls the server: asynchronous, queued until the
;; server is ready.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'passepartout-epc)
(require 'passepartout-log)
(require 'passepartout-orgedit)

(defgroup passepartout nil
  "A personal agent that lives in Emacs and `org-mode'."
  :group 'applications
  :prefix "passepartout-")

(defconst passepartout--directory
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "The directory this package was loaded from.")

(defun passepartout--source-root ()
  "Return the source checkout holding this package, or nil."
  (let ((root (file-name-directory (directory-file-name passepartout--directory))))
    (and (file-exists-p (expand-file-name "passepartout/__init__.py" root))
         (file-exists-p (expand-file-name "pyproject.toml" root))
         root)))

(defun passepartout--default-python ()
  "Return the project's virtualenv interpreter when it exists, else \"python3\"."
  (let ((root (file-name-directory (directory-file-name passepartout--directory))))
    (let ((venv (expand-file-name ".venv/bin/python" root)))
      (if (file-executable-p venv) venv "python3"))))

(defcustom passepartout-python-command (passepartout--default-python)
  "The Python interpreter that runs the Passepartout server.
The default is the project's .venv/bin/python when it exists beside this
package's directory, else \"python3\"."
  :type 'string)

(defcustom passepartout-server-args '("-m" "passepartout" "serve")
  "The arguments given to `passepartout-python-command' to start the server."
  :type '(repeat string))

(defcustom passepartout-server-environment nil
  "Extra environment entries for the server, each a string \"NAME=VALUE\".
They come before `process-environment', so they take precedence."
  :type '(repeat string))

(defcustom passepartout-server-directory nil
  "The working directory of the server, or nil.
When nil, the server runs in the source checkout holding this package
when there is one, else in your home directory."
  :type '(choice (const :tag "Automatic" nil) directory))

(defcustom passepartout-approval-timeout 120
  "Seconds an approval waits for an answer before it counts as a denial."
  :type 'number)

(defcustom passepartout-start-timeout 60
  "Seconds the server has to print its port after it starts."
  :type 'number)

(defcustom passepartout-ready-hook nil
  "Hook run when the server has started and accepted the handshake."
  :type 'hook)

(defcustom passepartout-server-exit-functions nil
  "Abnormal hook run when the server goes away.
Each function receives one argument, a string describing what happened."
  :type 'hook)

(defconst passepartout--callbacks
  '(passepartout--on-chunk passepartout--on-done passepartout--on-error
    passepartout--on-tool passepartout--on-approval passepartout--on-notify
    passepartout--on-status passepartout--on-org-edit)
  "The only functions the server may call in Emacs.")

;;;; State

(defvar passepartout--process nil "The server process.")
(defvar passepartout--connection nil "The EPC connection to the server.")
(defvar passepartout--state 'stopped
  "The server's state: stopped, starting, ready or error.")
(defvar passepartout--server-info nil "What the server answered to `hello'.")
(defvar passepartout--queue nil "Calls waiting for the server to be ready.")
(defvar passepartout--start-timer nil "Timer that gives up on a slow start.")
(defvar passepartout--stopping nil "Non-nil while the server is stopped on purpose.")

(defun passepartout-state ()
  "Return the server's state: stopped, starting, ready or error."
  passepartout--state)

(defun passepartout-live-p ()
  "Return non-nil when the server is ready."
  (and (eq passepartout--state 'ready)
       (passepartout-epc-live-p passepartout--connection)))

;;;; Token and command

(defun passepartout--urandom (count)
  "Return COUNT bytes from /dev/urandom as a unibyte string, or nil."
  (when (file-readable-p "/dev/urandom")
    (ignore-errors
      (with-temp-buffer
        (set-buffer-multibyte nil)
        (let ((coding-system-for-read 'binary))
          (call-process "head" "/dev/urandom" t nil "-c" (number-to-string count)))
        (and (= (buffer-size) count) (buffer-string))))))

(defun passepartout--random-token ()
  "Return a fresh random token of 64 hexadecimal digits.
The bytes come from /dev/urandom; where it cannot be read, from Emacs's
generator seeded by the system, the time and the process id."
  (secure-hash 'sha256
               (or (passepartout--urandom 32)
                   (progn (random t)
                          (format "%s%s%s%s%s" (random) (random) (current-time)
                                  (emacs-pid) (recent-keys))))))

(defvar passepartout--id-counter 0 "Makes each id of this Emacs different.")

(defun passepartout--new-id (length)
  "Return a fresh id of LENGTH hexadecimal digits, unique, not secret."
  (substring (secure-hash 'sha256 (format "%S %S %S %S" (current-time) (random)
                                          (emacs-pid) (cl-incf passepartout--id-counter)))
             0 length))

(defun passepartout--command ()
  "Return the command line of the server."
  (cons passepartout-python-command passepartout-server-args))

(defun passepartout--failure-report (what)
  "Return a report for WHAT went wrong, with the command and the last lines."
  (format "%s\nCommand: %s\nInterpreter: %s\nLast lines of %s:\n%s"
          what
          (mapconcat #'shell-quote-argument (passepartout--command) " ")
          (or (executable-find passepartout-python-command) passepartout-python-command)
          passepartout-log-buffer-name
          (passepartout--log-tail)))

;;;; Start and stop

(defun passepartout--set-state (state)
  "Set the server's STATE and refresh the mode lines."
  (setq passepartout--state state)
  (force-mode-line-update t))

;;;###autoload
(defun passepartout-start ()
  "Start the Passepartout server, unless it is running already.
Return at once; the handshake completes in the background and
`passepartout-ready-hook' runs when the server is ready."
  (interactive)
  (if (and (process-live-p passepartout--process)
           (memq passepartout--state '(starting ready)))
      (when (called-interactively-p 'interactive)
        (message "Passepartout: server already %s" passepartout--state))
    (passepartout--launch)))

(defun passepartout--launch ()
  "Launch the server process with a fresh token."
  (passepartout--cleanup)
  (let* ((token (passepartout--random-token))
         ;; A stale PASSEPARTOUT_TOKEN (the old hand-over) would win over stdin: unset.
         (process-environment
          (append '("PASSEPARTOUT_TOKEN") passepartout-server-environment
                  process-environment))
         (default-directory (file-name-as-directory
                             (expand-file-name (or passepartout-server-directory
                                                   (passepartout--source-root)
                                                   "~/"))))
         (stdout (generate-new-buffer " *passepartout-stdout*" t))
         (stderr (make-pipe-process
                  :name "passepartout-stderr" :buffer nil :noquery t
                  :coding 'utf-8-unix
                  :filter #'passepartout--stderr-filter)))
    (passepartout--set-state 'starting)
    (passepartout--log "starting: %s" (mapconcat #'identity (passepartout--command) " "))
    (condition-case err
        (setq passepartout--process
              (make-process
               :name "passepartout" :buffer stdout
               :command (passepartout--command)
               :coding 'utf-8-unix :connection-type 'pipe :noquery t
               :stderr stderr
               :filter (passepartout--stdout-filter token)
               :sentinel #'passepartout--sentinel))
      (error
       (delete-process stderr)
       (kill-buffer stdout)
       (passepartout--fail (format "The server could not be started: %s"
                                   (error-message-string err)))))
    (when passepartout--process
      ;; The token goes on stdin: a server that already died says why in its sentinel.
      (ignore-errors (process-send-string passepartout--process (concat token "\n")))
      (set-process-query-on-exit-flag passepartout--process nil)
      (process-put passepartout--process 'passepartout-stderr stderr)
      (setq passepartout--start-timer
            (run-at-time passepartout-start-timeout nil
                         #'passepartout--start-timed-out passepartout--process)))
    passepartout--process))

(defun passepartout--stderr-filter (_process output)
  "Append the server's stderr OUTPUT to the log buffer."
  (passepartout--log-insert output))

(defun passepartout--stdout-filter (token)
  "Return a stdout filter: read the port, then say hello with TOKEN."
  (lambda (process output)
    (when (buffer-live-p (process-buffer process))
      (with-current-buffer (process-buffer process)
        (goto-char (point-max))
        (insert output)
        (when (and (eq passepartout--state 'starting)
                   (eq process passepartout--process))
          (goto-char (point-min))
          (cond
           ((looking-at "\\([0-9]+\\)[ \t\r]*\n")
            (passepartout--connect (string-to-number (match-string 1)) token))
           ((looking-at ".*\n")
            (passepartout--fail
             (format "The server printed %S instead of its port."
                     (string-trim (match-string 0)))))))))))

(defun passepartout--connect (port token)
  "Connect to the server on PORT and present TOKEN."
  (passepartout--log "server listens on port %d" port)
  (condition-case err
      (setq passepartout--connection
            (passepartout-epc-connect
             "127.0.0.1" port
             :handlers (mapcar (lambda (sym) (cons (symbol-name sym) sym))
                               passepartout--callbacks)
             :log-function (lambda (text) (passepartout--log "epc: %s" text))
             :on-close #'passepartout--connection-closed
             :attachments t))
    (error (passepartout--fail (format "Could not connect to port %d: %s"
                                       port (error-message-string err)))))
  (when passepartout--connection
    (passepartout-epc-call
     passepartout--connection 'hello
     (list token (list :approval-timeout passepartout-approval-timeout
                       :emacs-version emacs-version
                       :attachments t))
     #'passepartout--hello-done
     (lambda (err)
       (passepartout--fail (format "The server refused the handshake: %s"
                                   (passepartout-epc-format-error err)))))))

(defun passepartout--hello-done (info)
  "Record the server's INFO and send each queued call."
  (when (timerp passepartout--start-timer)
    (cancel-timer passepartout--start-timer))
  (setq passepartout--server-info info)
  (passepartout--set-state 'ready)
  (passepartout--log "ready: %S" info)
  (let ((queue (nreverse passepartout--queue)))
    (setq passepartout--queue nil)
    (dolist (call queue) (apply #'passepartout-call call)))
  (run-hooks 'passepartout-ready-hook))

(defun passepartout--start-timed-out (process)
  "Give up on PROCESS when it has not completed the handshake."
  (when (and (eq process passepartout--process) (eq passepartout--state 'starting))
    (passepartout--fail (format "The server did not start within %s seconds."
                                passepartout-start-timeout))))

(defun passepartout--drop-queue (what)
  "Fail each queued call, because of WHAT."
  (let ((queue (nreverse passepartout--queue)))
    (setq passepartout--queue nil)
    (dolist (call queue)
      (when (nth 3 call)
        (funcall (nth 3 call) (list 'connection-closed what))))))

(defun passepartout--fail (what)
  "Stop everything and warn that the server failed: WHAT went wrong."
  (passepartout--log "failed: %s" what)
  (let ((report (passepartout--failure-report what)))
    (passepartout--cleanup)
    (passepartout--drop-queue what)
    (passepartout--set-state 'error)
    (display-warning 'passepartout report :error)
    (run-hook-with-args 'passepartout-server-exit-functions what)))

(defun passepartout--sentinel (process event)
  "React to the server PROCESS changing state with EVENT."
  (unless (process-live-p process)
    (passepartout--log "server process: %s" (string-trim event))
    (when (and (eq process passepartout--process) (not passepartout--stopping))
      ;; Let the last stderr lines arrive before they are quoted.
      (let ((stderr (process-get process 'passepartout-stderr)))
        (when (process-live-p stderr)
          (accept-process-output stderr 0.05)))
      (if (eq passepartout--state 'starting)
          (passepartout--fail (format "The server exited during start: %s"
                                      (string-trim event)))
        (passepartout--server-lost (format "The server exited: %s" (string-trim event)))))))

(defun passepartout--connection-closed (conn)
  "React to CONN, the connection to the server, closing."
  (when (and (eq conn passepartout--connection) (not passepartout--stopping))
    (let ((process passepartout--process))
      ;; A dying server closes its socket first: report its exit instead, when it comes.
      (when (process-live-p process)
        (accept-process-output process 0.2))
      (cond ((eq passepartout--state 'error))
            ((and process (not (process-live-p process)))
             (passepartout--server-lost (format "The server exited: %s"
                                                (passepartout--exit-text process))))
            (t (passepartout--server-lost "The connection to the server closed."))))))

(defun passepartout--exit-text (process)
  "Return how PROCESS ended, as text."
  (pcase (process-status process)
    ('signal (format "killed by signal %d" (process-exit-status process)))
    (status (format "%s with code %d" status (process-exit-status process)))))

(defun passepartout--server-lost (what)
  "Report that the running server went away: WHAT happened."
  (unless (eq passepartout--state 'error)
    (passepartout--cleanup)
    (passepartout--drop-queue what)
    (passepartout--set-state 'error)
    (message "Passepartout: %s  M-x passepartout-restart starts it again." what)
    (run-hook-with-args 'passepartout-server-exit-functions what)))

(defun passepartout--cleanup ()
  "Close the connection and kill the process, if any."
  (let ((passepartout--stopping t)
        (process passepartout--process)
        (conn passepartout--connection))
    (setq passepartout--process nil
          passepartout--connection nil
          passepartout--server-info nil)
    (when (timerp passepartout--start-timer)
      (cancel-timer passepartout--start-timer)
      (setq passepartout--start-timer nil))
    (when conn (passepartout-epc-close conn))
    (when process
      (let ((stderr (process-get process 'passepartout-stderr)))
        (when (process-live-p process)
          (passepartout--stop-gently process))
        (when (buffer-live-p (process-buffer process))
          (kill-buffer (process-buffer process)))
        (when (processp stderr)
          (delete-process stderr))))))

(defvar passepartout--stop-grace 2.0
  "Seconds the server has to exit after the end of its stdin.")

(defun passepartout--stop-gently (process)
  "Close the stdin of PROCESS, for a clean exit; kill it when it lingers."
  (ignore-errors (process-send-eof process))
  (let ((deadline (+ (float-time) passepartout--stop-grace)))
    (while (and (process-live-p process) (< (float-time) deadline))
      (accept-process-output process 0.02)))
  (when (process-live-p process)
    (delete-process process)))

(defun passepartout-stop ()
  "Stop the Passepartout server.
Calls still waiting for it fail, and so do the turns it was running."
  (interactive)
  (let ((running (memq passepartout--state '(starting ready))))
    (passepartout--cleanup)
    (passepartout--drop-queue "The server was stopped.")
    (passepartout--set-state 'stopped)
    (passepartout--log "stopped")
    (when running
      (run-hook-with-args 'passepartout-server-exit-functions "The server was stopped.")))
  (when (called-interactively-p 'interactive)
    (message "Passepartout: server stopped")))

(defun passepartout-restart ()
  "Stop the server, then start it again."
  (interactive)
  (passepartout-stop)
  (passepartout-start))

(defun passepartout--kill-emacs ()
  "Stop the server when Emacs exits."
  (when (process-live-p passepartout--process)
    (passepartout-stop)))

(add-hook 'kill-emacs-hook #'passepartout--kill-emacs)

;;;; Calls

(defun passepartout-call (method args &optional callback errback)
  "Call the server's METHOD with ARGS; CALLBACK receives the value.
ERRBACK receives an error answer (KIND MESSAGE).  Start the server when
it is not running, and queue the call until it is ready.  Return at once."
  (pcase passepartout--state
    ('ready
     (if (passepartout-epc-live-p passepartout--connection)
         (passepartout-epc-call passepartout--connection method args callback errback)
       (passepartout--server-lost "The connection to the server is gone.")
       (passepartout--queue-call method args callback errback)))
    (_ (passepartout--queue-call method args callback errback))))

(defun passepartout--queue-call (method args callback errback)
  "Queue the call of METHOD with ARGS, CALLBACK and ERRBACK until ready."
  (push (list method args callback errback) passepartout--queue)
  (unless (eq passepartout--state 'starting)
    (passepartout-start)))

(defun passepartout-wait-ready (&optional timeout)
  "Wait at most TIMEOUT seconds for the server to be ready.
TIMEOUT defaults to `passepartout-start-timeout'.  Return non-nil when
the server is ready.  For tests and scripts."
  (let ((deadline (+ (float-time) (or timeout passepartout-start-timeout))))
    (while (and (eq passepartout--state 'starting) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (passepartout-live-p)))

(provide 'passepartout-server)
;;; passepartout-server.el ends here
