;;; emacs_bridge.el --- Emacs side of the bridge benchmark  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by bench/emacs_bridge.py (which starts the raw sources and the fake
;; model and passes their ports in BENCH_* variables):
;;
;;   `emacs -Q --batch -L elisp -l bench/emacs_bridge.el -f passepartout-bench-run'
;;
;; Prints one line per figure, "BENCH NAME SECONDS...", for the driver.

;;; Code:

(require 'bytecomp)

(defun passepartout-bench--compile ()
  "Byte-compile the package into a temporary directory.
That directory comes first in `load-path'."
  (let* ((source (file-name-directory (locate-library "passepartout.el")))
         (target (make-temp-file "passepartout-elc-" t))
         (byte-compile-dest-file-function
          (lambda (file) (expand-file-name (concat (file-name-base file) ".elc") target)))
         (byte-compile-verbose nil))
    (push target load-path)
    (dolist (file (directory-files source t "\\`passepartout.*\\.el\\'"))
      (let ((inhibit-message t)) (byte-compile-file file)))
    ;; Compiling loaded the sources of required files: load the compiled code over them.
    (dolist (file (directory-files target t "\\.elc\\'"))
      (load file nil t))))

(passepartout-bench--compile)
(require 'passepartout)
(require 'passepartout-chat)
(load (expand-file-name "emacs_onscreen" (file-name-directory load-file-name)) nil t)

(defun passepartout-bench--env (name)
  "Return the number in the environment variable NAME."
  (string-to-number (getenv name)))

(defun passepartout-bench--print (name values)
  "Print the figure NAME with its VALUES, in seconds."
  (princ (format "BENCH %s %s\n" name (mapconcat (lambda (v) (format "%.7f" v)) values " "))))

(defun passepartout-bench--wait (predicate process)
  "Wait for output of PROCESS until PREDICATE is true, 60 seconds at most."
  (let ((deadline (+ (float-time) 60)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output process 0.05))
    (unless (funcall predicate) (error "Benchmark timed out"))))

;;;; The raw-socket baselines

(defun passepartout-bench--raw-echo (port payloads)
  "Round-trip each of PAYLOADS, strings, through the raw echo server on PORT.
Return the seconds each took."
  (let* ((buffer (generate-new-buffer " *raw*" t))
         (received 0)
         (process (make-network-process
                   :name "raw-echo" :host "127.0.0.1" :service port :coding 'binary
                   :noquery t :buffer buffer
                   :filter (lambda (_p output) (setq received (+ received (length output))))))
         times)
    (dolist (payload payloads)
      (let ((frame (concat (format "%06x" (length payload)) payload))
            (start (float-time)))
        (setq received 0)
        (process-send-string process frame)
        (passepartout-bench--wait (lambda () (>= received (length frame))) process)
        (push (- (float-time) start) times)))
    (delete-process process)
    (kill-buffer buffer)
    (nreverse times)))

;;;; The transport against the real server

(defvar passepartout-bench--call-gcs nil
  "The garbage collections of each call timed: (COUNT . SECONDS).")

(defun passepartout-bench--call (method args)
  "Call METHOD with ARGS on the server and return the seconds to the answer."
  (let ((done nil) (start (float-time)) (gcs gcs-done) (gc gc-elapsed)
        (process (passepartout-epc-connection-process passepartout--connection)))
    (passepartout-epc-call passepartout--connection method args
                           (lambda (_) (setq done t)) (lambda (e) (error "%S" e)))
    (while (not done) (accept-process-output process 1))
    (prog1 (- (float-time) start)
      (push (cons (- gcs-done gcs) (- gc-elapsed gc)) passepartout-bench--call-gcs))))

(defun passepartout-bench--payload (size)
  "Return SIZE bytes of text with some quotes, backslashes and newlines."
  (let ((unit "lorem ipsum \"dolor\" sit amet \\ consectetur adipiscing elit\n"))
    (substring (apply #'concat (make-list (1+ (/ size (length unit))) unit)) 0 size)))

;;;; Emacs alone

(defun passepartout-bench--codec (payload attachments)
  "Encode and decode a frame returning PAYLOAD five times; return the seconds.
With ATTACHMENTS, PAYLOAD travels as an attachment; else it is printed
and read."
  (cl-loop repeat 5 collect
           (let ((start (float-time)))
             (with-temp-buffer
               (set-buffer-multibyte nil)
               (insert (passepartout-epc-encode (list 'return 1 payload) attachments))
               (unless (equal (nth 2 (car (passepartout-epc--take-frames
                                           (passepartout-epc--make-connection))))
                              payload)
                 (error "The payload did not survive")))
             (- (float-time) start))))

;;;; Streaming into a chat buffer

(defun passepartout-bench--chunks-raw (port count)
  "Insert COUNT chunk frames from the source on PORT with a bare filter.
Return the seconds from the request to the last byte inserted."
  (let* ((buffer (generate-new-buffer " *raw-chunks*" t))
         (total (length (passepartout-bench--frames count)))
         (process (make-network-process
                   :name "raw-chunks" :host "127.0.0.1" :service port :coding 'binary
                   :noquery t :buffer buffer
                   :filter (lambda (p output)
                             (with-current-buffer (process-buffer p)
                               (goto-char (point-max))
                               (insert output)))))
         (start (float-time)))
    (process-send-string process (format "%d\n" count))
    (passepartout-bench--wait (lambda () (>= (buffer-size buffer) total)) process)
    (prog1 (- (float-time) start)
      (delete-process process)
      (kill-buffer buffer))))

(defun passepartout-bench--frames (count)
  "Return the bytes the chunk source sends for COUNT chunks."
  (let (frames)
    (dotimes (i count)
      (let ((body (format "(call %d chunk (\"bench\" \"turn\" \"word \"))" (1+ i))))
        (push (format "%06x%s" (length body) body) frames)))
    (apply #'concat (nreverse frames))))

(defvar passepartout-bench--gc-seconds nil
  "The garbage collection time of each streaming run.")

(defun passepartout-bench--chunks-epc (port count)
  "Stream COUNT on-chunk frames from PORT into a real chat buffer.
Return the seconds from the request to the last chunk shown."
  (let* ((buffer (generate-new-buffer "*passepartout-bench*"))
         (turn nil))
    (with-current-buffer buffer
      (org-mode)
      (insert "#+passepartout_session: bench\n\n* You\nhello\n")
      (passepartout-chat-mode 1)
      (setq turn (passepartout-chat--open-turn "hello"))
      (setf (passepartout-turn-id turn) "turn"))
    (let* ((conn (passepartout-epc-connect
                  "127.0.0.1" port
                  :handlers (list (cons "chunk" #'passepartout--on-chunk))))
           (process (passepartout-epc-connection-process conn))
           (gc gc-elapsed)
           (start (float-time)))
      (process-send-string process (format "%d\n" count))
      (passepartout-bench--wait (lambda () (>= (passepartout-turn-chunks turn) count)) process)
      (push (- gc-elapsed gc) passepartout-bench--gc-seconds)
      (prog1 (- (float-time) start)
        (unless (= (length (passepartout-turn-reply turn)) (* 5 count))
          (error "Wrong reply length %d" (length (passepartout-turn-reply turn))))
        (passepartout-epc-close conn)
        (with-current-buffer buffer (set-buffer-modified-p nil))
        (kill-buffer buffer)))))

;;;; A whole turn

(defun passepartout-bench--settle (timeout)
  "Wait at most TIMEOUT seconds for the server's background loading to end."
  (let ((deadline (+ (float-time) timeout)))
    (while (and (< (float-time) deadline)
                (not (with-current-buffer (passepartout--log-buffer)
                       (save-excursion
                         (goto-char (point-min))
                         (re-search-forward
                          "embedding model [^ ]+ \\(loaded\\|unavailable\\)" nil t)))))
      (accept-process-output nil 0.1))))

;; A turn with `passepartout-chat-send', and one with gptel's `gptel-send' (from a
;; checkout named by GPTEL_DIR), against the same fake model in the same Emacs.  Both
;; clocks start as the send command is called and stop at two moments:
;; - on screen: the change that puts the whole reply's text in the client's buffer
;;   (`passepartout-bench-watch'), the same moment for both clients;
;; - turn end: each client's own end of the turn, Passepartout's
;;   `passepartout-chat-turn-end-functions' (after the server's done event and the
;;   Markdown conversion), gptel's `gptel-post-response-functions' (after its curl
;;   process exited).

(defun passepartout-bench--reply ()
  "Return the reply the fake model gives to every prompt."
  (getenv "BENCH_REPLY"))

(defun passepartout-bench--turn (buffer)
  "Send the prompt in the chat BUFFER and wait for the turn's end.
Return (ON-SCREEN TURN-END FIRST-CHUNK SENT-AT DONE-AT): seconds from the
send to the reply's text in the buffer, to the turn end and to the first
chunk; then the wall-clock times of the send and the turn end."
  (with-current-buffer buffer
    (goto-char (point-max))
    (insert (getenv "BENCH_PROMPT")))
  (let* ((watch (passepartout-bench-watch buffer (passepartout-bench--reply)))
         (ended nil)
         (hook (lambda (_turn) (setq ended (float-time))))
         (start (progn (with-current-buffer buffer
                         (add-hook 'passepartout-chat-turn-end-functions hook nil t))
                       (float-time)))
         (turn (with-current-buffer buffer (passepartout-chat-send))))
    (passepartout-bench--wait (lambda () ended) nil)
    (with-current-buffer buffer
      (remove-hook 'passepartout-chat-turn-end-functions hook t))
    (passepartout-bench-unwatch watch)
    (unless (eq (passepartout-turn-state turn) 'done)
      (error "Turn ended %s: %s" (passepartout-turn-state turn)
             (passepartout-turn-reply turn)))
    (unless (car watch)
      (error "The reply was not in the chat buffer: %S" (passepartout-turn-reply turn)))
    (list (- (car watch) start) (- ended start)
          (- (passepartout-turn-first turn) start) start ended)))

(defvar passepartout-bench--gptel-buffer nil
  "The gptel chat buffer, or nil when GPTEL_DIR is not set.")

(defun passepartout-bench--gptel-setup (port)
  "Load gptel from GPTEL_DIR and point it at the fake model on PORT.
Return its chat buffer, or nil when GPTEL_DIR is unset."
  (when-let ((dir (getenv "GPTEL_DIR"))
             ((not (string-empty-p dir))))
    ;; gptel needs compat (Debian: elpa-compat) on Emacs before 29.
    (dolist (compat (append (list (getenv "COMPAT_DIR"))
                            (file-expand-wildcards
                             "/usr/share/emacs/site-lisp/elpa/compat-*")))
      (when (and compat (file-directory-p compat))
        (add-to-list 'load-path compat t)))
    (add-to-list 'load-path (expand-file-name dir))
    (require 'gptel)
    (require 'gptel-openai)
    (setq gptel-backend (gptel-make-openai "bench"
                          :host (format "127.0.0.1:%d" port) :protocol "http"
                          :endpoint "/v1/chat/completions" :stream t :key "sk-bench"
                          :models '(gptel-fake-model))
          gptel-model 'gptel-fake-model)
    (with-current-buffer (get-buffer-create "*gptel-bench*")
      (org-mode)
      (gptel-mode 1)
      (current-buffer))))

(defun passepartout-bench--gptel-turn (buffer)
  "Send the prompt with `gptel-send' in BUFFER and wait for the turn's end.
Return (ON-SCREEN TURN-END SENT-AT): seconds from the send to the reply's
text in the buffer and to gptel's post-response hook, then the wall-clock
time of the send."
  (with-current-buffer buffer
    (goto-char (point-max))
    (insert (getenv "BENCH_PROMPT"))
    (let* ((watch (passepartout-bench-watch buffer (passepartout-bench--reply)))
           (ended nil)
           (start (progn (add-hook 'gptel-post-response-functions
                                   (lambda (&rest _) (setq ended (float-time))) nil t)
                         (float-time))))
      (gptel-send)
      (passepartout-bench--wait (lambda () ended) nil)
      (kill-local-variable 'gptel-post-response-functions)
      (passepartout-bench-unwatch watch)
      (unless (car watch)
        (error "The reply was not in gptel's buffer: %S"
               (buffer-substring-no-properties (max (point-min) (- (point-max) 300))
                                               (point-max))))
      (list (- (car watch) start) (- ended start) start))))

(defun passepartout-bench--turns (count)
  "Send a prompt COUNT times in a chat buffer, and as many with gptel if loaded.
The two alternate, so that the machine's load hits both alike.
Return the lists of our seconds to the reply on screen, to the turn end, to
the first chunk, our wall-clock sent and done times, then gptel's seconds to
the reply on screen and to its turn end, and its wall-clock sent times."
  (let ((buffer (passepartout-chat)) ours gptel)
    (dotimes (_ count)
      (push (passepartout-bench--turn buffer) ours)
      (when passepartout-bench--gptel-buffer
        (push (passepartout-bench--gptel-turn passepartout-bench--gptel-buffer) gptel)))
    (setq ours (nreverse ours) gptel (nreverse gptel))
    (append (cl-loop for i below 5 collect (mapcar (lambda (r) (nth i r)) ours))
            (cl-loop for i below 3 collect (mapcar (lambda (r) (nth i r)) gptel)))))

(defun passepartout-bench--write-profile (file)
  "Stop the CPU profiler and write its report, fully expanded, to FILE."
  (require 'profiler)
  (let ((profile (progn (setq profiler-cpu-log (profiler-cpu-log))
                        (profiler-cpu-profile))))
    (profiler-stop)
    (with-current-buffer (profiler-report-setup-buffer profile)
      (goto-char (point-min))
      (while (not (eobp))               ; each entry, expanded to its leaves
        (ignore-errors (profiler-report-expand-entry t))
        (forward-line 1))
      (write-region (point-min) (point-max) file))))

(defun passepartout-bench-run ()
  "Run every measurement and print the figures."
  (let* ((calls (passepartout-bench--env "BENCH_CALLS"))
         (chunks (passepartout-bench--env "BENCH_CHUNKS"))
         (echo-port (passepartout-bench--env "BENCH_ECHO_PORT"))
         (chunk-port (passepartout-bench--env "BENCH_CHUNK_PORT"))
         (mb (passepartout-bench--payload (* 1024 1024)))
         (read-process-output-max (* 1024 1024))
         (passepartout-python-command (getenv "BENCH_PYTHON"))
         (passepartout-server-directory (getenv "BENCH_ROOT"))
         (passepartout-server-args (if (getenv "BENCH_SERVER_ARGS")
                                       (split-string (getenv "BENCH_SERVER_ARGS") "\n")
                                     passepartout-server-args))
         ;; A `serve' child of this Emacs is measured, not the daemon.
         (passepartout-server-lifetime 'emacs)
         ;; The server saves its state on the way out: give it time (a profile too).
         (passepartout--stop-grace 30)
         (passepartout-server-environment (split-string (getenv "BENCH_SERVER_ENV") "\n")))
    (passepartout-bench--print "raw-rtt" (passepartout-bench--raw-echo
                                          echo-port (make-list calls "(return 1 nil)")))
    (passepartout-bench--print "raw-1mb" (passepartout-bench--raw-echo
                                          echo-port (make-list 10 mb)))
    (passepartout-bench--print "chunks-raw" (cl-loop repeat 5 collect
                                                     (passepartout-bench--chunks-raw
                                                      chunk-port chunks)))
    (passepartout-bench--print "chunks-epc" (cl-loop repeat 5 collect
                                                     (passepartout-bench--chunks-epc
                                                      chunk-port chunks)))
    (passepartout-bench--print "chunks-epc-gc" passepartout-bench--gc-seconds)
    (let ((gc-cons-threshold (* 64 1024 1024)))
      (passepartout-bench--print "chunks-epc-biggc"
                                 (cl-loop repeat 5 collect
                                          (passepartout-bench--chunks-epc chunk-port chunks))))
    (passepartout-bench--print "emacs-codec-1mb" (passepartout-bench--codec mb nil))
    (passepartout-bench--print "emacs-attach-1mb" (passepartout-bench--codec mb t))
    (passepartout-start)
    (unless (passepartout-wait-ready 60)
      (error "The server did not start: %s" (passepartout--log-tail 30)))
    ;; One turn first: the model layer loads (seconds) before anything is timed;
    ;; and the memory's embedding model, loading in the background, competes for
    ;; the server's interpreter until it is done: wait for it (60 s at most).
    (setq passepartout-bench--gptel-buffer
          (condition-case err
              (passepartout-bench--gptel-setup (passepartout-bench--env "BENCH_LLM_PORT"))
            (error (princ (format "NOTE gptel could not be loaded from %s: %s\n"
                                  (getenv "GPTEL_DIR") (error-message-string err)))
                   nil)))
    (passepartout-bench--turns 1)
    (passepartout-bench--settle 60)
    (passepartout-bench--print "ping" (cl-loop repeat calls collect
                                               (passepartout-bench--call 'ping nil)))
    (setq passepartout-bench--call-gcs nil)
    (passepartout-bench--print "echo-1mb" (cl-loop repeat 10 collect
                                                   (passepartout-bench--call 'echo (list mb))))
    (passepartout-bench--print "echo-1mb-gcs" (mapcar #'car passepartout-bench--call-gcs))
    (passepartout-bench--print "echo-1mb-gc" (mapcar #'cdr passepartout-bench--call-gcs))
    (when (getenv "BENCH_PROFILE")  ; under bench/pysample.py: sample the turns only
      (signal-process passepartout--process 'usr1))
    (when (getenv "BENCH_PROFILE_EMACS")
      (profiler-start 'cpu))
    (let ((turns (passepartout-bench--turns (passepartout-bench--env "BENCH_TURNS"))))
      (when (getenv "BENCH_PROFILE_EMACS")
        (passepartout-bench--write-profile (getenv "BENCH_PROFILE_EMACS")))
      (passepartout-bench--print "turn-screen" (nth 0 turns))
      (passepartout-bench--print "turn" (nth 1 turns))
      (passepartout-bench--print "turn-first" (nth 2 turns))
      (passepartout-bench--print "turn-sent-at" (nth 3 turns))
      (passepartout-bench--print "turn-done-at" (nth 4 turns))
      (when (nth 5 turns)
        (passepartout-bench--print "gptel-screen" (nth 5 turns))
        (passepartout-bench--print "gptel-turn" (nth 6 turns))
        (passepartout-bench--print "gptel-sent-at" (nth 7 turns))))
    (passepartout-stop)))

;;; emacs_bridge.el ends here
