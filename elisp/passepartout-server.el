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

;; Two lifetimes (`passepartout-server-lifetime').  `persistent', the
;; default: the agent is the person's daemon, which outlives Emacs.
;; `passepartout-start' attaches to it over its Unix socket with the token
;; of its 0600 file, or first runs `passepartout daemon --detach' in the
;; background when none answers; `passepartout-stop' detaches (with a
;; prefix argument it stops the daemon too), and exiting Emacs leaves it
;; running.  When the connection drops (the daemon was restarted, or killed
;; and brought back by a service manager), the turns and approvals in
;; flight end with an error and Emacs attaches again by itself, with a
;; growing delay, and says so.  passepartout-daemon.el finds the daemon.
;;
;; `emacs': the server is a child of Emacs.  `passepartout-start' runs it, writes
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
(require 'passepartout-daemon)
(require 'passepartout-epc)
(require 'passepartout-log)
(require 'passepartout-orgedit)

(declare-function project-root "project" (project))

(defgroup passepartout nil
  "A personal agent that lives in Emacs and `org-mode'."
  :group 'applications
  :prefix "passepartout-")

(defcustom passepartout-command "passepartout"
  "The `passepartout' executable, found on the variable `exec-path' by default.
What `pipx install' or `uv tool install' of the Python package puts on
the PATH.  Used unless `passepartout-python-command' is set."
  :type 'string)

(defcustom passepartout-python-command nil
  "A Python interpreter that runs the server as a module, or nil.
nil (the default) runs `passepartout-command'.  Set it to run the server
from a source checkout, e.g. the checkout's .venv/bin/python; then
`passepartout-server-args' and `passepartout-cli-args' follow it."
  :type '(choice (const :tag "The passepartout executable" nil) string))

(defcustom passepartout-workspace nil
  "The workspace of a turn sent from a buffer that is in no project.
A turn's workspace is where its shell commands run and its relative paths
point: the project of the buffer the chat or the send came from (see
`project-current'), else this directory, else the daemon's default
\=(PASSEPARTOUT_WORKSPACE, else your home directory)."
  :type '(choice (const :tag "The daemon's default" nil) directory))

(defun passepartout-workspace-of (&optional buffer)
  "Return the workspace of a turn sent from BUFFER (default: the current one).
The root of BUFFER's project, else `passepartout-workspace', else nil."
  (with-current-buffer (or buffer (current-buffer))
    (let ((project (and (require 'project nil t) (project-current nil))))
      (cond (project (directory-file-name (expand-file-name (project-root project))))
            (passepartout-workspace
             (directory-file-name (expand-file-name passepartout-workspace)))))))

(defcustom passepartout-server-lifetime 'persistent
  "How long the agent lives, and who starts it.
`persistent': one daemon per person that outlives Emacs, runs cron jobs
whether Emacs is open or not, and serves several Emacs processes (and
the terminal) at once; `passepartout-start' attaches to it, starting it
with `passepartout daemon --detach' when none runs.  `emacs': a
`passepartout serve' child of this Emacs that stops with it."
  :type '(choice (const :tag "A daemon that outlives Emacs" persistent)
                 (const :tag "A child of this Emacs" emacs)))

(defcustom passepartout-server-args '("-m" "passepartout" "serve")
  "The arguments given to `passepartout-python-command' to start the server.
Used only when `passepartout-python-command' is set.
For the `emacs' lifetime; the daemon's commands are
`passepartout-cli-args' followed by a subcommand."
  :type '(repeat string))

(defcustom passepartout-cli-args '("-m" "passepartout")
  "The arguments that run the `passepartout' command line from Python.
Used only when `passepartout-python-command' is set.
`passepartout-python-command' runs them followed by \"daemon --detach\" or
\"stop\" for the daemon of the `persistent' lifetime."
  :type '(repeat string))

(defcustom passepartout-server-environment nil
  "Extra environment entries for the server, each a string \"NAME=VALUE\".
They come before `process-environment', so they take precedence."
  :type '(repeat string))

(defcustom passepartout-server-directory nil
  "The directory the server's processes are started in, or nil for your home.
The server moves to its own state directory at once; a turn's workspace
is `passepartout-workspace-of' the buffer it came from."
  :type '(choice (const :tag "Automatic" nil) directory))

(defcustom passepartout-approval-timeout 120
  "Seconds an approval waits for an answer before it counts as a denial."
  :type 'number)

(defcustom passepartout-start-timeout 300
  "Seconds the server has to print its port after it starts.
For the daemon: seconds for attaching, starting it included.  A start
takes seconds on a quiet machine and can take minutes on a busy one (the
command line waits as long); a server that dies says so at once."
  :type 'number)

(defcustom passepartout-reconnect-max-delay 30
  "The longest wait, in seconds, between two attempts to reattach to the daemon."
  :type 'number)

(defcustom passepartout-ready-hook nil
  "Hook run when the server has started and accepted the handshake."
  :type 'hook)

(defcustom passepartout-server-exit-functions nil
  "Abnormal hook run when the server goes away.
Each function receives one argument, a string describing what happened."
  :type 'hook)

(defconst passepartout--callbacks
  '(("chunk" . passepartout--on-chunk)
    ("done" . passepartout--on-done)
    ("error" . passepartout--on-error)
    ("tool" . passepartout--on-tool)
    ("approval" . passepartout--on-approval)
    ("notify" . passepartout--on-notify)
    ("status" . passepartout--on-status)
    ("org-edit" . passepartout--on-org-edit))
  "The events of the daemon's protocol, each with the function that shows it.
The server may call nothing else in Emacs: an event of another name is
refused (the daemon keeps the same list, in passepartout/protocol.py).")

;;;; State

(defvar passepartout--process nil "The server process.")
(defvar passepartout--connection nil "The EPC connection to the server.")
(defvar passepartout--state 'stopped
  "The server's state: stopped, starting, ready or error.")
(defvar passepartout--server-info nil "What the server answered to `hello'.")
(defvar passepartout--queue nil "Calls waiting for the server to be ready.")
(defvar passepartout--start-timer nil "Timer that gives up on a slow start.")
(defvar passepartout--stopping nil "Non-nil while the server is stopped on purpose.")
(defvar passepartout--daemon nil
  "Non-nil while the connection is to the daemon: the daemon.json plist.")
(defvar passepartout--daemon-directory nil
  "Where the daemon said it keeps daemon.json, once `daemon --detach' said it.")
(defvar passepartout--helper nil
  "The `passepartout daemon --detach' or `passepartout stop' process running.")
(defvar passepartout--reconnect-timer nil "The timer of the next attempt to reattach.")
(defvar passepartout--reconnect-attempts 0 "Attempts to reattach since the drop.")
(defvar passepartout--last-command nil "The command the last start ran.")

(defun passepartout-state ()
  "Return the server's state: stopped, starting, ready, reconnecting or error."
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

(defun passepartout--program ()
  "Return the program of the server and of the command line."
  (or passepartout-python-command passepartout-command))

(defun passepartout--command ()
  "Return the command line of the server."
  (if passepartout-python-command
      (cons passepartout-python-command passepartout-server-args)
    (list passepartout-command "serve")))

(defun passepartout--cli-command (&rest args)
  "Return the command line of `passepartout' with ARGS."
  (if passepartout-python-command
      (append (list passepartout-python-command) passepartout-cli-args args)
    (cons passepartout-command args)))

(defun passepartout--directory ()
  "Return the directory the server's processes are started in."
  (file-name-as-directory (expand-file-name (or passepartout-server-directory "~/"))))

(defun passepartout-persistent-p ()
  "Return non-nil when the agent is the daemon that outlives Emacs."
  (eq passepartout-server-lifetime 'persistent))

(defun passepartout--failure-report (what)
  "Return a report for WHAT went wrong, with the command and the last lines."
  (format "%s\nCommand: %s\nInterpreter: %s\nLast lines of %s:\n%s"
          what
          (mapconcat #'shell-quote-argument
                     (or passepartout--last-command (passepartout--command)) " ")
          (or (executable-find (passepartout--program)) (passepartout--program))
          passepartout-log-buffer-name
          (passepartout--log-tail)))

;;;; Start and stop

(defun passepartout--set-state (state)
  "Set the server's STATE and refresh the mode lines."
  (setq passepartout--state state)
  (force-mode-line-update t))

;;;###autoload
(defun passepartout-start ()
  "Start the Passepartout server, or attach to the daemon, unless done already.
With the `persistent' lifetime, attach to the running daemon, starting
one (in the background) when none answers.  Return at once; the
handshake completes in the background and `passepartout-ready-hook' runs
when the server is ready."
  (interactive)
  (cond ((passepartout--running-p)
         (when (called-interactively-p 'interactive)
           (message "Passepartout: %s already %s"
                    (if passepartout--daemon "daemon" "server") passepartout--state)))
        ((passepartout-persistent-p) (passepartout--attach t))
        (t (passepartout--launch))))

(defun passepartout--running-p ()
  "Return non-nil when the server is ready or on its way."
  (and (memq passepartout--state '(starting ready))
       (or (process-live-p passepartout--process)
           (process-live-p passepartout--helper)
           (passepartout-epc-live-p passepartout--connection))))

(defun passepartout--launch ()
  "Launch the server process with a fresh token."
  (passepartout--cleanup)
  (setq passepartout--last-command (passepartout--command))
  (let* ((token (passepartout--random-token))
         ;; A stale PASSEPARTOUT_TOKEN (the old hand-over) would win over stdin: unset.
         (process-environment
          (append '("PASSEPARTOUT_TOKEN") passepartout-server-environment
                  process-environment))
         (default-directory (passepartout--directory))
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
  (passepartout--handshake port nil token #'passepartout--fail))

(defun passepartout--handshake (service family token on-fail)
  "Connect to SERVICE and say `hello' with TOKEN; ON-FAIL receives why not.
FAMILY nil: SERVICE is a port of 127.0.0.1; `local': the path of a Unix
socket.  ON-FAIL is called once, with a description, when the connection
or the handshake fails, unless the connection was given up meanwhile."
  (let ((conn (condition-case err
                  (passepartout-epc-connect
                   "127.0.0.1" service
                   :family family
                   :handlers passepartout--callbacks
                   :log-function (lambda (text) (passepartout--log "epc: %s" text))
                   :on-close #'passepartout--connection-closed
                   :attachments t)
                (error (funcall on-fail (format "Could not connect to %s: %s" service
                                                (error-message-string err)))
                       nil))))
    (when conn
      (setq passepartout--connection conn)
      (passepartout-epc-call
       conn 'hello
       (list token (list :approval-timeout passepartout-approval-timeout
                         :emacs-version emacs-version
                         :attachments t
                         ;; A face: the notices sent while none was attached come now.
                         :backlog t))
       (lambda (info)
         (when (eq conn passepartout--connection)
           (passepartout--hello-done info)))
       (lambda (err)
         (when (eq conn passepartout--connection)
           (setq passepartout--connection nil)
           (passepartout-epc-close conn)
           (funcall on-fail (format "The server refused the handshake: %s"
                                    (passepartout-epc-format-error err)))))))))

(defun passepartout--hello-done (info)
  "Record the server's INFO and send each queued call."
  (when (timerp passepartout--start-timer)
    (cancel-timer passepartout--start-timer))
  (setq passepartout--server-info info)
  (when (eq passepartout--state 'reconnecting)
    (message "Passepartout: reconnected to the daemon"))
  (setq passepartout--reconnect-attempts 0)
  (passepartout--set-state 'ready)
  (passepartout--log "ready: %S" info)
  (let ((queue (nreverse passepartout--queue)))
    (setq passepartout--queue nil)
    (dolist (call queue) (apply #'passepartout-call call)))
  (run-hooks 'passepartout-ready-hook))

(defun passepartout--start-timed-out (process)
  "Give up on PROCESS when it has not completed the handshake."
  (when (and (eq process passepartout--process) (eq passepartout--state 'starting)
             (not passepartout--daemon))
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
  (cond
   ((or (not (eq conn passepartout--connection)) passepartout--stopping))
   (passepartout--daemon
    (passepartout--daemon-lost "the connection to the daemon closed"))
   (t
    (let ((process passepartout--process))
      ;; A dying server closes its socket first: report its exit instead, when it comes.
      (when (process-live-p process)
        (accept-process-output process 0.2))
      (cond ((eq passepartout--state 'error))
            ((and process (not (process-live-p process)))
             (passepartout--server-lost (format "The server exited: %s"
                                                (passepartout--exit-text process))))
            (t (passepartout--server-lost "The connection to the server closed.")))))))

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
  "Close the connection and kill the process, if any.
The daemon itself is left running."
  (let ((passepartout--stopping t)
        (process passepartout--process)
        (helper passepartout--helper)
        (conn passepartout--connection))
    (setq passepartout--process nil
          passepartout--helper nil
          passepartout--connection nil
          passepartout--server-info nil
          passepartout--daemon nil)
    (passepartout--cancel-reconnect)
    (when (timerp passepartout--start-timer)
      (cancel-timer passepartout--start-timer)
      (setq passepartout--start-timer nil))
    ;; A daemon it started meanwhile runs on, in a session of its own.
    (when (process-live-p helper) (delete-process helper))
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

(defun passepartout-stop (&optional daemon)
  "Stop the Passepartout server, or detach from the daemon.
Calls still waiting for it fail, and so do the turns it was running.
With the `persistent' lifetime the daemon runs on, for cron jobs and
the other clients; with a prefix argument DAEMON, it is stopped too
\(see `passepartout-stop-daemon')."
  (interactive "P")
  (let ((running (memq passepartout--state '(starting ready reconnecting)))
        (attached passepartout--daemon)
        (what (if passepartout--daemon "Detached from the daemon." "The server was stopped.")))
    (passepartout--cleanup)
    (passepartout--drop-queue what)
    (passepartout--set-state 'stopped)
    (passepartout--log "%s" (if attached "detached" "stopped"))
    (when running
      (run-hook-with-args 'passepartout-server-exit-functions what))
    (cond (daemon (passepartout-stop-daemon))
          ((called-interactively-p 'interactive)
           (message "Passepartout: %s" (if attached
                                           "detached; the daemon runs on (C-u M-x passepartout-stop stops it)"
                                         "server stopped"))))))

(defun passepartout-stop-daemon (&optional then)
  "Detach, and stop the daemon with `passepartout stop' (memory is saved).
Every attached client is detached.  Return the process at once; the
echo area says when the daemon has exited.  THEN, when non-nil, is
called with the process once it has."
  (interactive)
  (when (memq passepartout--state '(starting ready reconnecting))
    (passepartout-stop))
  (let ((command (passepartout--cli-command "stop")))
    (passepartout--log "running: %s" (mapconcat #'identity command " "))
    (message "Passepartout: stopping the daemon...")
    (let ((process
           (passepartout-daemon-run
            "passepartout-stop" command
            :environment passepartout-server-environment
            :directory (passepartout--directory)
            :on-exit (lambda (process status output)
                       (passepartout--log "stop: %s" (string-trim output))
                       (if (zerop status)
                           (message "Passepartout: %s"
                                    (string-remove-prefix "passepartout stop: "
                                                          (string-trim output)))
                         (display-warning 'passepartout
                                          (format "The daemon did not stop: %s"
                                                  (string-trim output))
                                          :error))
                       (when then (funcall then process))))))
      (set-process-query-on-exit-flag process nil)
      process)))

(defun passepartout-restart ()
  "Stop the server, then start it again.
With the `persistent' lifetime this restarts the daemon: it is what
reads new code, skills and settings, and every attached client
reattaches by itself.  To attach again without restarting it, use
`passepartout-stop' then `passepartout-start'."
  (interactive)
  (if (not (passepartout-persistent-p))
      (progn (passepartout-stop) (passepartout-start))
    (passepartout-stop)
    (let ((stopping (passepartout-stop-daemon
                     (lambda (process)
                       (when (and (eq process passepartout--helper)
                                  (eq passepartout--state 'starting))
                         (setq passepartout--helper nil)
                         (passepartout--attach t))))))
      (message "Passepartout: restarting the daemon (every attached client reattaches)")
      (setq passepartout--helper stopping)
      (passepartout--set-state 'starting))))

(defun passepartout--kill-emacs ()
  "Stop the server when Emacs exits; leave the daemon running."
  (cond ((process-live-p passepartout--process) (passepartout-stop))
        (passepartout--daemon (passepartout--cleanup))))

(add-hook 'kill-emacs-hook #'passepartout--kill-emacs)

;;;; The daemon

(defun passepartout--daemon-directory ()
  "Return where daemon.json should be: as the daemon said, else as it is found."
  (or passepartout--daemon-directory
      (passepartout-daemon-directory passepartout-server-environment)))

(defun passepartout--attach (may-start)
  "Attach to the running daemon; when none answers and MAY-START, start one.
Return at once: the rest happens in the background."
  (passepartout--cleanup)
  (passepartout--set-state 'starting)
  (setq passepartout--start-timer
        (run-at-time passepartout-start-timeout nil #'passepartout--attach-timed-out))
  (passepartout--attach-to
   (passepartout-daemon-read-info (passepartout--daemon-directory))
   (lambda (why)
     (passepartout--log "no daemon to attach to (%s)" why)
     (if may-start
         (passepartout--start-daemon)
       (passepartout--fail why)))))

(defun passepartout--attach-timed-out ()
  "Give up attaching when it has taken too long."
  (when (eq passepartout--state 'starting)
    (passepartout--fail (format "Could not attach to the daemon within %s seconds."
                                passepartout-start-timeout))))

(defun passepartout--attach-to (info on-fail)
  "Connect to the daemon INFO describes and say hello; ON-FAIL receives why not."
  (let ((token (and info (passepartout-daemon-token info))))
    (cond
     ((not token)
      (funcall on-fail (if info
                           "its token file is not a private daemon.token of ours"
                         "no daemon.json of ours in a private directory")))
     ((passepartout-daemon-socket-too-long-p (plist-get info :socket))
      (funcall on-fail (format "the socket path %s is too long for Emacs; set \
XDG_RUNTIME_DIR, or a shorter PASSEPARTOUT_HOME" (plist-get info :socket))))
     (t
      (setq passepartout--daemon info)
      (passepartout--handshake (plist-get info :socket) 'local token
                               (lambda (why)
                                 (setq passepartout--daemon nil)
                                 (funcall on-fail why)))))))

(defun passepartout--start-daemon ()
  "Run `passepartout daemon --detach' in the background, then attach."
  (let ((command (passepartout--cli-command "daemon" "--detach")))
    (setq passepartout--last-command command)
    (passepartout--log "starting: %s" (mapconcat #'identity command " "))
    (setq passepartout--helper
          (passepartout-daemon-run
           "passepartout-daemon-start" command
           :environment passepartout-server-environment
           :directory (passepartout--directory)
           :on-exit #'passepartout--daemon-started))
    (set-process-query-on-exit-flag passepartout--helper nil)))

(defun passepartout--daemon-started (process status output)
  "Attach to the daemon that `daemon --detach' started or found.
PROCESS is that command, STATUS and OUTPUT are its exit status and output."
  (when (and (eq process passepartout--helper) (eq passepartout--state 'starting))
    (setq passepartout--helper nil)
    (passepartout--log-insert output)
    (let ((socket (and (zerop status) (passepartout-daemon-parse-detach output))))
      (if (not socket)
          (passepartout--fail (format "The daemon did not start (status %d): %s"
                                      status (string-trim output)))
        (setq passepartout--daemon-directory (file-name-directory socket))
        (passepartout--attach-to
         (passepartout-daemon-read-info passepartout--daemon-directory)
         (lambda (why) (passepartout--fail (format "Could not attach to the daemon: %s"
                                                   why))))))))

(defun passepartout--daemon-lost (what)
  "The connection to the daemon dropped (WHAT): end what was in flight, reattach."
  (passepartout--log "%s" what)
  (let ((passepartout--stopping t))
    (when passepartout--connection
      (passepartout-epc-close passepartout--connection)))
  (setq passepartout--connection nil
        passepartout--server-info nil
        passepartout--daemon nil
        passepartout--reconnect-attempts 0)
  (passepartout--drop-queue what)
  (passepartout--set-state 'reconnecting)
  (message "Passepartout: %s; reconnecting..." what)
  (run-hook-with-args 'passepartout-server-exit-functions
                      (format "%s; reconnecting" what))
  (passepartout--schedule-reconnect))

(defun passepartout--reconnect-delay (attempt)
  "Return the seconds to wait before reconnection ATTEMPT (0, 1, ...)."
  (min passepartout-reconnect-max-delay (* 0.1 (expt 2 (min attempt 16)))))

(defun passepartout--schedule-reconnect ()
  "Try to reattach after a delay that grows with each attempt."
  (passepartout--cancel-reconnect)
  (setq passepartout--reconnect-timer
        (run-at-time (passepartout--reconnect-delay passepartout--reconnect-attempts)
                     nil #'passepartout--reconnect))
  (cl-incf passepartout--reconnect-attempts))

(defun passepartout--cancel-reconnect ()
  "Cancel the next attempt to reattach, if one is planned."
  (when (timerp passepartout--reconnect-timer)
    (cancel-timer passepartout--reconnect-timer))
  (setq passepartout--reconnect-timer nil))

(defun passepartout--reconnect ()
  "One attempt to reattach to the daemon; another is planned when it fails.
Only attaches: the daemon is started again by a service manager, or by
the next call made from Emacs."
  (setq passepartout--reconnect-timer nil)
  (when (eq passepartout--state 'reconnecting)
    (passepartout--attach-to
     (passepartout-daemon-read-info (passepartout--daemon-directory))
     (lambda (why)
       (passepartout--log "reattaching failed: %s" why)
       (when (eq passepartout--state 'reconnecting)
         (passepartout--schedule-reconnect))))))

;;;; Calls

(defun passepartout-call (method args &optional callback errback)
  "Call the server's METHOD with ARGS; CALLBACK receives the value.
ERRBACK receives an error answer (KIND MESSAGE).  Start the server when
it is not running, and queue the call until it is ready.  Return at once."
  (pcase passepartout--state
    ('ready
     (if (passepartout-epc-live-p passepartout--connection)
         (passepartout-epc-call passepartout--connection method args callback errback)
       (if passepartout--daemon
           (passepartout--daemon-lost "the connection to the daemon is gone")
         (passepartout--server-lost "The connection to the server is gone."))
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
    (while (and (memq passepartout--state '(starting reconnecting))
                (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (passepartout-live-p)))

(provide 'passepartout-server)
;;; passepartout-server.el ends here
