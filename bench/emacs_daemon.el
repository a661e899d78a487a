;;; emacs_daemon.el --- One timed `passepartout-chat', for bench/emacs_daemon.py  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by bench/emacs_daemon.py in a fresh `emacs --batch' for each sample:
;; loads the package and starts `org-mode' once in a scratch buffer (not
;; timed: org's own first start takes a fresh Emacs about 1.7 s here, and
;; the person's Emacs has long paid it), then times `M-x passepartout-chat' and a
;; prompt sent from its buffer to the end of the first answer, with the
;; lifetime BENCH_LIFETIME (persistent: attach to the daemon or start it;
;; emacs: a `serve' child).  A second turn in the same Emacs is timed too
;; (the server then warm and attached).  Prints "first-ms N" and
;; "again-ms N" on stdout.  With the `emacs' lifetime the child stops with
;; this Emacs; the daemon runs on.

;;; Code:

(require 'passepartout)
(require 'passepartout-chat)

(defun passepartout-bench-daemon--turn (buffer text)
  "Send TEXT from chat BUFFER; return the seconds until its turn has ended."
  (let ((start (float-time))
        (turn (with-current-buffer buffer
                (goto-char (point-max))
                (insert text)
                (passepartout-chat-send))))
    (while (passepartout-turn-live-p turn)
      (accept-process-output nil 0.001))
    (unless (eq (passepartout-turn-state turn) 'done)
      (error "The turn ended as %s: %s" (passepartout-turn-state turn)
             (passepartout--log-tail 20)))
    (- (float-time) start)))

(defun passepartout-bench-daemon-run ()
  "Time the first answer after `passepartout-chat', then a second one."
  (with-temp-buffer (org-mode))
  (let* ((passepartout-server-lifetime (intern (getenv "BENCH_LIFETIME")))
         (passepartout-python-command (getenv "BENCH_PYTHON"))
         (passepartout-server-directory (getenv "BENCH_ROOT"))
         (passepartout-server-environment (split-string (getenv "BENCH_SERVER_ENV") "\n"))
         (passepartout-chat-show-usage nil)
         (inhibit-message t)
         (start (float-time))
         (buffer (passepartout-chat))
         (first (+ (- (float-time) start)
                   (passepartout-bench-daemon--turn buffer "Say hello, please."))))
    (let ((again (passepartout-bench-daemon--turn buffer "Once more, please.")))
      (princ (format "first-ms %.1f\nagain-ms %.1f\n" (* 1000 first) (* 1000 again))))
    (passepartout-stop)))

(provide 'emacs_daemon)
;;; emacs_daemon.el ends here
