;;; passepartout-daemon-test.el --- Emacs attached to the real daemon  -*- lexical-binding: t; -*-

;;; Commentary:

;; The `persistent' lifetime against the real `passepartout daemon' and
;; the fake model: Emacs attaches to a daemon already running, chats,
;; detaches and the daemon runs on; it starts one when none runs, which
;; outlives it; when the daemon is killed, the turn in flight ends with an
;; error and Emacs reattaches by itself once the daemon is back;
;; `passepartout-restart' restarts the daemon.
;;
;; Each test has its own daemon, state and runtime directory.  With
;; PASSEPARTOUT_TEST_ATTACHED set (tests/test_daemon_emacs.py), the attach
;; test instead uses the environment it was given and the daemon that
;; already runs there, and leaves it running.

;;; Code:

(require 'passepartout-test-helpers)

(defvar passepartout-daemon-test--messages nil
  "The messages shown while a test runs, newest first.")

(defun passepartout-daemon-test--record (format-string &rest args)
  "Keep the message FORMAT-STRING with ARGS, formatted as `message' would."
  (when format-string
    (push (apply #'format-message format-string args) passepartout-daemon-test--messages)))

(defun passepartout-daemon-test--environment (directory url)
  "Return the daemon's environment: state in DIRECTORY, the fake model at URL."
  (let ((runtime (make-temp-file "/tmp/ppd-" t)))
    (set-file-modes runtime #o700)
    (append (passepartout-test--server-environment directory url)
            (list (concat "XDG_RUNTIME_DIR=" runtime)
                  (concat "MEMEX_DIR=" (expand-file-name "memex" directory))
                  "PASSEPARTOUT_EMBEDDINGS=off"))))

(defun passepartout-daemon-test--info ()
  "Return the running daemon's daemon.json plist, or nil."
  (passepartout-daemon-read-info (passepartout--daemon-directory)))

(defun passepartout-daemon-test--cli (&rest args)
  "Run `passepartout' with ARGS in the daemon's environment; return its output."
  (let ((process-environment (append passepartout-server-environment process-environment))
        (default-directory passepartout-test-root))
    (with-temp-buffer
      (apply #'call-process passepartout-test-python nil t nil "-m" "passepartout" args)
      (buffer-string))))

(defun passepartout-daemon-test-call (replies body)
  "Call BODY with a scratch daemon environment, its fake model serving REPLIES.
The daemon, whichever was started, is stopped afterwards.  BODY
receives the state directory."
  (passepartout-stop)
  (setq passepartout-test--shared-running nil)
  (let* ((shared (passepartout-test--shared-fake))
         (directory (make-temp-file "passepartout-daemon-test-" t))
         (passepartout-server-lifetime 'persistent)
         (passepartout-python-command passepartout-test-python)
         (passepartout-server-directory passepartout-test-root)
         (passepartout-server-environment
          (passepartout-daemon-test--environment directory (nth 1 shared)))
         (passepartout--daemon-directory nil)
         (passepartout-chat-buffer-name "*passepartout-daemon-test*")
         (passepartout-daemon-test--messages nil))
    (dolist (dir '("config" "memex/projects" "memex/system"))
      (make-directory (expand-file-name dir directory) t))
    (passepartout-test--script replies)
    (unwind-protect
        (cl-letf* ((real-message (symbol-function 'message))
                   ((symbol-function 'message)
                    (lambda (format-string &rest args)
                      (apply #'passepartout-daemon-test--record format-string args)
                      (apply real-message format-string args))))
          (funcall body directory))
      (passepartout-test--kill-chat-buffers)
      (passepartout-stop)
      (passepartout-daemon-test--cli "stop")
      (let ((runtime (passepartout-daemon--getenv "XDG_RUNTIME_DIR"
                                                  passepartout-server-environment)))
        (ignore-errors (delete-directory runtime t)))
      (delete-directory directory t))))

(defmacro passepartout-daemon-test-with (replies &rest body)
  "Run BODY with a scratch daemon environment, the fake model serving REPLIES."
  (declare (indent 1) (debug t))
  `(passepartout-daemon-test-call ,replies (lambda (state-dir) (ignore state-dir) ,@body)))

(defun passepartout-daemon-test--chat (prompt)
  "Send PROMPT from the chat buffer; return the turn once it has ended."
  (let* ((buffer (passepartout-chat))
         (turn (passepartout-test-prompt buffer prompt)))
    (passepartout-test-wait-turn turn 60)
    turn))

(defun passepartout-daemon-test--attach-chat-detach ()
  "Attach to the running daemon, chat, detach; it must keep running."
  (let ((before (passepartout-daemon-test--info)))
    (should (passepartout-daemon-pid before))
    (passepartout-start)
    (should (passepartout-wait-ready 30))
    (should passepartout--daemon)
    (should (equal (plist-get passepartout--daemon :pid) (plist-get before :pid)))
    (should-not passepartout--process)  ; no child of this Emacs
    (let ((turn (passepartout-daemon-test--chat "Are you there?")))
      (should (eq (passepartout-turn-state turn) 'done))
      (should (string-match-p "Attached and answering\\." (passepartout-turn-reply turn))))
    (passepartout-stop)
    (should (eq (passepartout-state) 'stopped))
    (let ((after (passepartout-daemon-test--info)))
      (should (equal (plist-get after :pid) (plist-get before :pid)))
      (should (passepartout-daemon-pid after)))
    (message "passepartout-daemon-test: detached from pid %s, which runs on"
             (plist-get before :pid))))

(ert-deftest passepartout-daemon-test-attach-chat-detach ()
  "Emacs attaches to a daemon already running, chats, detaches; it runs on."
  (if (getenv "PASSEPARTOUT_TEST_ATTACHED")
      ;; The daemon of tests/test_daemon_emacs.py, in the environment it gave us.
      (let ((passepartout-server-lifetime 'persistent)
            (passepartout-python-command passepartout-test-python)
            (passepartout-server-directory passepartout-test-root)
            (passepartout-chat-buffer-name "*passepartout-daemon-test*"))
        (unwind-protect (passepartout-daemon-test--attach-chat-detach)
          (passepartout-test--kill-chat-buffers)
          (passepartout-stop)))
    (passepartout-daemon-test-with '(((text . "Attached and answering.")))
      (should (string-match-p "started: pid"
                              (passepartout-daemon-test--cli "daemon" "--detach")))
      (passepartout-daemon-test--attach-chat-detach))))

(ert-deftest passepartout-daemon-test-starts-one-that-outlives-emacs ()
  "With no daemon running, `passepartout-start' starts one, not a child of Emacs.
Exiting Emacs (its `kill-emacs-hook') leaves it running."
  (passepartout-daemon-test-with nil
    (should-not (passepartout-daemon-test--info))
    (passepartout-start)
    (should (eq (passepartout-state) 'starting))
    (should (passepartout-wait-ready 60))
    (let* ((info (passepartout-daemon-test--info))
           (pid (passepartout-daemon-pid info)))
      (should pid)
      (should-not (= (alist-get 'ppid (process-attributes pid)) (emacs-pid)))
      (should (eq (passepartout-call-sync 'ping nil 10) 'pong))
      (passepartout--kill-emacs)
      (should-not (passepartout-live-p))
      (should (passepartout-daemon-pid (passepartout-daemon-test--info))))))

(ert-deftest passepartout-daemon-test-reconnects-after-a-kill ()
  "A killed daemon: the turn in flight fails at once, Emacs reattaches by itself."
  (passepartout-daemon-test-with '(((text . "This reply comes too late.") (delay . 20)))
    (should (string-match-p "started: pid" (passepartout-daemon-test--cli "daemon" "--detach")))
    (passepartout-start)
    (should (passepartout-wait-ready 30))
    (let* ((pid (plist-get passepartout--daemon :pid))
           (buffer (passepartout-chat))
           (turn (passepartout-test-prompt buffer "Take your time"))
           (closed nil))
      ;; In flight: the daemon has the turn (its model may still be loading).
      (passepartout-test-wait
       (lambda () (member (buffer-local-value 'passepartout-chat--session buffer)
                          (plist-get (passepartout-call-sync 'status nil 10) :sessions)))
       10 "the daemon to have the turn")
      (signal-process pid 'SIGKILL)
      (setq closed (float-time))
      (should (memq (passepartout-test-wait-turn turn 10) '(error failed fail)))
      (should (< (- (float-time) closed) 5))
      (should (eq (passepartout-state) 'reconnecting))
      (should (cl-some (lambda (m) (string-match-p "reconnecting" m))
                       passepartout-daemon-test--messages))
      ;; What a service manager does: start it again.
      (passepartout-test-wait (lambda () (string-match-p "not running"
                                                         (passepartout-daemon-test--cli "status")))
                              10 "the old daemon's lock to go")
      (should (string-match-p "started: pid" (passepartout-daemon-test--cli "daemon" "--detach")))
      (passepartout-test-wait (lambda () (passepartout-live-p)) 40 "the reattachment")
      (should (member "Passepartout: reconnected to the daemon"
                      passepartout-daemon-test--messages))
      (should-not (equal (plist-get passepartout--daemon :pid) pid))
      (should (eq (passepartout-call-sync 'ping nil 10) 'pong)))))

(ert-deftest passepartout-daemon-test-restart-restarts-the-daemon ()
  "`passepartout-restart' stops the daemon and attaches to a new one."
  (passepartout-daemon-test-with nil
    (passepartout-start)
    (should (passepartout-wait-ready 60))
    (let ((pid (plist-get passepartout--daemon :pid)))
      (passepartout-restart)
      (should (eq (passepartout-state) 'starting))
      (passepartout-test-wait (lambda () (passepartout-live-p)) 60 "the restart")
      (should-not (equal (plist-get passepartout--daemon :pid) pid))
      (should-not (passepartout-daemon-pid (list :pid pid))))))


;;;; Finding the daemon, without one

(ert-deftest passepartout-daemon-test-directory-as-the-daemon-finds-it ()
  "The directory of daemon.json is found as passepartout/wire/place.py finds it."
  (let ((process-environment '("HOME=/home/ann")))
    (should (equal (passepartout-daemon-directory '("XDG_RUNTIME_DIR=/run/user/7"))
                   "/run/user/7/passepartout"))
    (should (equal (passepartout-daemon-directory '("XDG_RUNTIME_DIR=relative"))
                   "/home/ann/.local/state/passepartout/run"))
    (should (equal (passepartout-daemon-directory '("PASSEPARTOUT_HOME=~/state"))
                   "/home/ann/state/run"))
    (should (equal (passepartout-daemon-directory '("XDG_STATE_HOME=/s"))
                   "/s/passepartout/run"))
    ;; However long the path: never a shared place such as /tmp/passepartout-UID.
    (let ((long (concat "/" (make-string 120 ?x))))
      (should (equal (passepartout-daemon-directory
                      (list (concat "PASSEPARTOUT_HOME=" long)))
                     (concat long "/run")))
      (should (passepartout-daemon-socket-too-long-p (concat long "/run/daemon.sock")))
      (should-not (passepartout-daemon-socket-too-long-p "/run/user/7/passepartout/daemon.sock")))))

(ert-deftest passepartout-daemon-test-reads-only-a-private-directory ()
  "A daemon.json in a directory open to others, or through a symlink, is not read.
It could name someone else's socket, to which Emacs would send its token."
  (let* ((dir (make-temp-file "passepartout-place-" t))
         (link (concat dir "-link"))
         (token (expand-file-name "daemon.token" dir)))
    (unwind-protect
        (progn
          (with-temp-file (expand-file-name "daemon.json" dir)
            (insert (format "{\"pid\": 1, \"socket\": \"%s/daemon.sock\", \"token-file\": \"%s\"}"
                            dir token)))
          (set-file-modes (expand-file-name "daemon.json" dir) #o600)
          (with-temp-file token (insert "00ff\n"))
          (set-file-modes token #o600)
          (set-file-modes dir #o700)
          (let ((info (passepartout-daemon-read-info dir)))
            (should (equal (plist-get info :socket) (concat dir "/daemon.sock")))
            (should (equal (passepartout-daemon-token info) "00ff")))
          (make-symbolic-link dir link)
          (should-not (passepartout-daemon-read-info link))
          (set-file-modes dir #o755)
          (should-not (passepartout-daemon-read-info dir))
          (set-file-modes dir #o700)
          (set-file-modes (expand-file-name "daemon.json" dir) #o644)
          (should-not (passepartout-daemon-read-info dir)))
      (ignore-errors (delete-file link))
      (delete-directory dir t))))

(ert-deftest passepartout-daemon-test-follows-a-private-pointer-only ()
  "With no daemon in its own place, Emacs follows the state directory's pointer.
Only to a daemon whose pid lives, and only when daemon.place is ours,
closed to others and no symlink."
  (let* ((state (make-temp-file "passepartout-state-" t))
         (place (make-temp-file "passepartout-place-" t))
         (pointer (expand-file-name "daemon.place" state))
         (environment (list (concat "PASSEPARTOUT_HOME=" state)))
         (own (expand-file-name "run" state)))
    (unwind-protect
        (progn
          (with-temp-file (expand-file-name "daemon.json" place)
            (insert (format "{\"pid\": %d, \"socket\": \"%s/daemon.sock\", \"token-file\": \"%s/daemon.token\"}"
                            (emacs-pid) place state)))
          (set-file-modes (expand-file-name "daemon.json" place) #o600)
          (set-file-modes place #o700)
          (should (equal (passepartout-daemon-directory environment) own))
          (with-temp-file pointer (insert place "\n"))
          (set-file-modes pointer #o600)
          (should (equal (passepartout-daemon-directory environment) place))
          (set-file-modes pointer #o644)
          (should (equal (passepartout-daemon-directory environment) own))
          (set-file-modes pointer #o600)
          (rename-file pointer (concat pointer "-real"))
          (make-symbolic-link (concat pointer "-real") pointer)
          (should (equal (passepartout-daemon-directory environment) own)))
      (delete-directory state t)
      (delete-directory place t))))

(ert-deftest passepartout-daemon-test-sends-only-a-private-token-of-its-own ()
  "The token is read only from a private daemon.token of ours, no symlink.
daemon.json naming another file (a key) or a token open to others gives
no token, so nothing is sent; the socket is always the directory's own."
  (let* ((dir (make-temp-file "passepartout-place-" t))
         (token (expand-file-name "daemon.token" dir))
         (key (expand-file-name "id_rsa" dir))
         (info-file (expand-file-name "daemon.json" dir)))
    (cl-flet ((info (token-file socket)
                (with-temp-file info-file
                  (insert (format "{\"pid\": 1, \"socket\": \"%s\", \"token-file\": \"%s\"}"
                                  socket token-file)))
                (set-file-modes info-file #o600)
                (passepartout-daemon-read-info dir)))
      (unwind-protect
          (progn
            (set-file-modes dir #o700)
            (with-temp-file key (insert "abcdef\n"))
            (set-file-modes key #o600)
            (with-temp-file token (insert "00ff\n"))
            (set-file-modes token #o600)
            (let ((found (info token "/tmp/someone-elses.sock")))
              (should (equal (plist-get found :socket) (concat dir "/daemon.sock")))
              (should (equal (passepartout-daemon-token found) "00ff")))
            (should-not (passepartout-daemon-token (info key "/x")))
            (set-file-modes token #o644)
            (should-not (passepartout-daemon-token (info token "/x")))
            (delete-file token)
            (make-symbolic-link key token)
            (should-not (passepartout-daemon-token (info token "/x"))))
        (delete-directory dir t)))))

(ert-deftest passepartout-daemon-test-parses-what-detach-says ()
  "The socket comes from either line `passepartout daemon --detach' prints."
  (should (equal (passepartout-daemon-parse-detach
                  "passepartout daemon: started: pid 12, socket /run/user/7/passepartout/daemon.sock, port 4021\n")
                 "/run/user/7/passepartout/daemon.sock"))
  (should (equal (passepartout-daemon-parse-detach
                  "passepartout daemon: already runs: pid 12, socket /a b/daemon.sock, port 1\n")
                 "/a b/daemon.sock"))
  (should-not (passepartout-daemon-parse-detach "passepartout daemon: cannot create /x\n")))

(provide 'passepartout-daemon-test)
;;; passepartout-daemon-test.el ends here
