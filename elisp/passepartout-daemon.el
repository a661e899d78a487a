;;; passepartout-daemon.el --- Where the Passepartout daemon is, and its commands  -*- lexical-binding: t; -*-

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

;; The daemon (`passepartout daemon') is one agent per person that
;; outlives Emacs.  It writes daemon.json (pid, socket, port, token file)
;; in a private directory: $XDG_RUNTIME_DIR/passepartout, else
;; $PASSEPARTOUT_HOME/run, never a shared place, and names that
;; directory in $PASSEPARTOUT_HOME/daemon.place, so that a face whose
;; environment differs finds it too.  This file finds that directory as
;; the daemon does, reads the file and the token, and runs
;; the two commands Emacs needs: `passepartout daemon --detach' (start one
;; unless one runs) and `passepartout stop'.  It keeps no state:
;; passepartout-server.el does.
;;
;; Emacs attaches over the Unix socket, not the TCP port: the socket's
;; 0700 directory and the kernel's check of the peer's uid keep other
;; users off it, a port left behind by a killed daemon cannot be taken by
;; another user to collect the token, and a Unix socket has no Nagle
;; delay for Emacs (which cannot set TCP_NODELAY) to suffer.
;;
;; Before it sends the token, Emacs proves the place is its own: the
;; directory, daemon.json and the token file are its user's, closed to
;; everyone else and no symlinks, and the token file is a daemon.token.
;; Emacs cannot ask the kernel who listens on a socket (SO_PEERCRED), as
;; the Python clients do: it relies on that directory check, since only
;; its own user (or root) can put a socket in a 0700 directory of its
;; own.  A socket path too long for a Unix socket (the Python clients
;; reach it through the directory's descriptor) is refused with a clear
;; message: Emacs does not fall back to the TCP port.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'json)

(defconst passepartout-daemon--max-socket-path 100
  "The longest socket path the daemon uses in its preferred place.")

(defun passepartout-daemon--getenv (name environment)
  "Return the variable NAME as the daemon would see it.
ENVIRONMENT, a list of \"NAME=VALUE\" strings, comes before
`process-environment'.  An empty value is nil."
  (let* ((process-environment (append environment process-environment))
         (value (getenv name)))
    (and value (not (string-empty-p (string-trim value))) value)))

(defun passepartout-daemon-state-directory (environment)
  "Return the daemon's state directory (PASSEPARTOUT_HOME) for ENVIRONMENT."
  (let ((home (or (passepartout-daemon--getenv "HOME" environment) "~"))
        (own (passepartout-daemon--getenv "PASSEPARTOUT_HOME" environment)))
    (if own
        (expand-file-name (replace-regexp-in-string "\\`~" home own))
      (expand-file-name
       "passepartout"
       (or (passepartout-daemon--getenv "XDG_STATE_HOME" environment)
           (expand-file-name ".local/state" home))))))

(defun passepartout-daemon-own-directory (environment)
  "Return the directory a daemon started in ENVIRONMENT would use.
It is found as the daemon finds it (passepartout/wire/place.py)."
  (let ((runtime (passepartout-daemon--getenv "XDG_RUNTIME_DIR" environment)))
    (if (and runtime (file-name-absolute-p (string-trim runtime)))
        (expand-file-name "passepartout" (string-trim runtime))
      (expand-file-name "run" (passepartout-daemon-state-directory environment)))))

(defun passepartout-daemon-pointed-directory (environment)
  "Return the directory the running daemon's pointer names, or nil.
The daemon writes it to daemon.place in its state directory (that of
ENVIRONMENT); only a
file that is ours, closed to others and no symlink is read, and only an
absolute directory name in it is taken."
  (let ((file (expand-file-name "daemon.place"
                                (passepartout-daemon-state-directory environment))))
    (when (and (passepartout-daemon-private-p file) (file-readable-p file))
      (with-temp-buffer
        (insert-file-contents file nil 0 4096)
        (let ((line (string-trim (car (split-string (buffer-string) "\n")))))
          (and (not (string-empty-p line)) (file-name-absolute-p line)
               (directory-file-name line)))))))

(defun passepartout-daemon-directory (environment)
  "Return the directory of daemon.json for the daemon of ENVIRONMENT.
It is the one a daemon started in ENVIRONMENT would use, unless no
daemon runs there and the pointer in the state directory names another
one (a daemon started with another XDG_RUNTIME_DIR, or none): a face is
never the reason for a second daemon on one state directory.  A setting
only the daemon reads (its .env file) may move it, so this is the first
place to look, not the only one."
  (let ((own (passepartout-daemon-own-directory environment)))
    (if (passepartout-daemon-pid (passepartout-daemon-read-info own))
        own
      (let ((pointed (passepartout-daemon-pointed-directory environment)))
        (if (and pointed
                 (passepartout-daemon-pid (passepartout-daemon-read-info pointed)))
            pointed
          own)))))

(defun passepartout-daemon-socket-too-long-p (socket)
  "Return non-nil when SOCKET is too long a path for Emacs to connect to."
  (> (string-bytes (encode-coding-string socket 'utf-8))
     passepartout-daemon--max-socket-path))

(defun passepartout-daemon-private-p (file)
  "Return non-nil when FILE is ours and closed to others, no symlink.
The daemon puts nothing in a directory that is not; a daemon.json found
in one could send this Emacs's token to someone else's socket."
  (let ((attributes (file-attributes file 'integer)))
    (and attributes
         (not (stringp (file-attribute-type attributes)))  ; a symlink
         (eql (file-attribute-user-id attributes) (user-uid))
         (string-match-p "\\`.\\(?:...\\)-\\{6\\}\\'" (file-attribute-modes attributes)))))

(defun passepartout-daemon-read-info (directory)
  "Return the plist of DIRECTORY's daemon.json, or nil when there is none.
The keys are :pid, :socket, :port and :token-file, among others; :socket
is always DIRECTORY's daemon.sock, the socket in the directory proved
ours.  A file left by a daemon that was killed is read too: connecting
tells.  Nothing is read from a DIRECTORY that is not ours and closed to
others."
  (let ((file (expand-file-name "daemon.json" directory)))
    (when (and (passepartout-daemon-private-p (directory-file-name directory))
               (passepartout-daemon-private-p file))
      (condition-case nil
          (let ((json-object-type 'plist)
                (json-key-type 'keyword)
                (json-array-type 'list))
            (let ((info (json-read-file file)))
              (and (stringp (plist-get info :socket))
                   (stringp (plist-get info :token-file))
                   (plist-put info :socket
                              (expand-file-name "daemon.sock" directory)))))
        (error nil)))))

(defun passepartout-daemon-token (info)
  "Return the token in the file INFO names, or nil when it cannot be trusted.
Only a file named daemon.token that is ours, closed to others and no
symlink is read: daemon.json naming another file (a key, say) is
refused, so that no file of someone else's choosing leaves as a token."
  (let ((file (plist-get info :token-file)))
    (when (and (stringp file)
               (equal (file-name-nondirectory file) "daemon.token")
               (passepartout-daemon-private-p file)
               (file-readable-p file))
      (with-temp-buffer
        (insert-file-contents file)
        (let ((token (string-trim (buffer-string))))
          (and (string-match-p "\\`[0-9a-f]+\\'" token) token))))))

(defun passepartout-daemon-pid (info)
  "Return the pid of INFO's daemon when that process is alive, else nil."
  (let* ((pid (plist-get info :pid))
         (attributes (and (integerp pid) (> pid 1) (process-attributes pid))))
    ;; A zombie (state Z) has exited; nobody has reaped it yet.
    (and attributes (not (equal (alist-get 'state attributes) "Z")) pid)))

(defun passepartout-daemon-parse-detach (output)
  "Return the socket that OUTPUT of `passepartout daemon --detach' names, or nil.
It says \"passepartout daemon: started: pid N, socket S, port P\" or
\"... already runs: pid N, socket S, port P\"."
  (when (string-match
         "passepartout daemon: \\(?:started\\|already runs\\): pid [0-9]+, socket \\(.+\\), port [0-9]+"
         output)
    (match-string 1 output)))

(cl-defun passepartout-daemon-run (name command &key environment directory on-exit)
  "Run COMMAND, a list, as the process NAME and return the process.
ENVIRONMENT comes before `process-environment'; the process runs in
DIRECTORY.  ON-EXIT receives the process, its exit status and all it
printed (stdout and stderr together) once it has exited.  Emacs never
waits."
  (let* ((process-environment (append environment process-environment))
         (default-directory (file-name-as-directory (expand-file-name directory)))
         (buffer (generate-new-buffer (format " *%s*" name) t)))
    (make-process
     :name name :buffer buffer :command command
     :coding 'utf-8-unix :connection-type 'pipe :noquery t
     :sentinel
     (lambda (process _event)
       (unless (process-live-p process)
         (let ((output (if (buffer-live-p buffer)
                           (with-current-buffer buffer (buffer-string))
                         "")))
           (when (buffer-live-p buffer) (kill-buffer buffer))
           (when on-exit
             (funcall on-exit process (process-exit-status process) output))))))))

(provide 'passepartout-daemon)
;;; passepartout-daemon.el ends here
