;;; passepartout-test-helpers.el --- Shared helpers of the ERT tests  -*- lexical-binding: t; -*-

;;; Commentary:

;; Waiting without blind sleeps (`passepartout-test-wait' polls
;; `accept-process-output' against a deadline), the scripted fake model
;; server of the Python tests (tests/fakellm.py, standalone mode), and
;; `passepartout-test-with-server', which starts the real server process
;; with its state in a temporary directory and the fake model behind it.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'json)
(require 'passepartout)
(require 'passepartout-chat)
(require 'org-agenda)
(require 'org-element)

(defconst passepartout-test-root
  (file-name-directory
   (directory-file-name
    (file-name-directory
     (directory-file-name
      (file-name-directory (or load-file-name buffer-file-name))))))
  "The repository root.")

(defconst passepartout-test-python
  (expand-file-name ".venv/bin/python" passepartout-test-root)
  "The project's interpreter.")

;; These suites start their own `serve' child; the daemon's tests say so themselves.
(setq passepartout-server-lifetime 'emacs)

(defvar passepartout-test-server-timeout 60
  "Seconds the real server may take to be ready.")

(defun passepartout-test-wait (predicate &optional timeout what)
  "Wait until PREDICATE is non-nil, at most TIMEOUT seconds (default 15).
Return its value; fail the test naming WHAT when time runs out."
  (let ((deadline (+ (float-time) (or timeout 15)))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or value
        (ert-fail (list (format "timed out waiting for %s" (or what predicate))
                        (passepartout--log-tail 30))))))

;;;; The fake model

(defun passepartout-test-start-fake-llm (replies directory)
  "Start the scripted fake model, serving REPLIES (alists).
It is tests/fakellm.py; its script file goes in DIRECTORY.
Return (PROCESS . BASE-URL)."
  (let* ((script (expand-file-name "replies.json" directory))
         (buffer (generate-new-buffer " *fakellm*"))
         (default-directory passepartout-test-root))
    (with-temp-file script
      (insert (json-encode (or replies []))))
    (let ((process (make-process
                    :name "fakellm" :buffer buffer :noquery t
                    :connection-type 'pipe
                    :stderr (get-buffer-create " *fakellm-stderr*")
                    :command (list passepartout-test-python
                                   (expand-file-name "tests/fakellm.py" passepartout-test-root)
                                   "--port" "0" "--script" script))))
      (passepartout-test-wait
       (lambda () (with-current-buffer buffer
                    (save-excursion (goto-char (point-min)) (looking-at ".*\n"))))
       30 "the fake model's URL")
      (cons process (with-current-buffer buffer
                      (goto-char (point-min))
                      (string-trim (buffer-substring (point) (line-end-position))))))))

;;;; The real server

(defun passepartout-test--kill-chat-buffers ()
  "Kill every chat buffer."
  (dolist (buffer (buffer-list))
    (when (buffer-local-value 'passepartout-chat-mode buffer)
      (with-current-buffer buffer (set-buffer-modified-p nil))
      (kill-buffer buffer))))

(defun passepartout-test--server-environment (directory url)
  "Return the server's environment: state in DIRECTORY, the fake model at URL."
  (list (concat "PASSEPARTOUT_HOME=" (expand-file-name "home" directory))
        (concat "PASSEPARTOUT_CONFIG_DIR=" (expand-file-name "config" directory))
        "PASSEPARTOUT_MODEL=openai/fake-model"
        (concat "OPENAI_BASE_URL=" url)
        (concat "OPENAI_API_BASE=" url)
        "OPENAI_API_KEY=sk-test-not-a-key"
        "LITELLM_LOCAL_MODEL_COST_MAP=True"
        "HEARTBEAT_INTERVAL=3600"))

(defun passepartout-test-trust-skills (home)
  "Trust the skills in SKILLS_DIR in the state directory HOME, as the person would.
A skill outside the shipped set loads only once its exact content is trusted."
  (let ((skills (getenv "SKILLS_DIR"))
        (default-directory passepartout-test-root))
    (when skills
      (unless (zerop (call-process
                      passepartout-test-python nil nil nil "-c"
                      (concat "import sys; from passepartout.testing.skilltrust import "
                              "trust_skills; trust_skills(sys.argv[1], sys.argv[2])")
                      home skills))
        (error "Could not trust the test skills in %s" skills)))))

(defvar passepartout-test--shared-running nil
  "Non-nil while the running server is the shared one of the chat tests.")

(defun passepartout-test--start-server ()
  "Start the server with the current settings and wait until it is ready."
  (passepartout-start)
  (unless (passepartout-wait-ready passepartout-test-server-timeout)
    (ert-fail (list "the server did not start" (passepartout--log-tail 40)))))

(defun passepartout-test-call-with-server (replies body)
  "Call BODY with a fresh server started behind a fake model serving REPLIES.
BODY receives the state directory.  The server is stopped afterwards."
  (passepartout-stop)
  (setq passepartout-test--shared-running nil)
  (let* ((directory (make-temp-file "passepartout-test-" t))
         (fake (passepartout-test-start-fake-llm replies directory))
         (passepartout-python-command passepartout-test-python)
         (passepartout-server-directory passepartout-test-root)
         (passepartout-server-environment
          (passepartout-test--server-environment directory (cdr fake)))
         (passepartout-chat-buffer-name "*passepartout-test*"))
    (make-directory (expand-file-name "config" directory) t)
    (passepartout-test-trust-skills (expand-file-name "home" directory))
    (unwind-protect
        (progn
          (passepartout-test--start-server)
          (funcall body directory))
      (passepartout-test--kill-chat-buffers)
      (passepartout-stop)
      (when (process-live-p (car fake))
        (delete-process (car fake)))
      (delete-directory directory t))))

;;;; One server for many tests

(defvar passepartout-test--shared nil
  "The shared fake model: (PROCESS URL DIRECTORY), started once per Emacs.")

(defun passepartout-test--shared-fake ()
  "Return the shared fake model (PROCESS URL DIRECTORY), starting it when needed."
  (unless (process-live-p (car passepartout-test--shared))
    (let* ((directory (make-temp-file "passepartout-test-shared-" t))
           (buffer (generate-new-buffer " *fakellm-control*"))
           (process (make-process
                     :name "fakellm-control" :buffer buffer :noquery t
                     :connection-type 'pipe
                     :stderr (get-buffer-create " *fakellm-control-stderr*")
                     :command (list passepartout-test-python
                                    (expand-file-name "elisp/test/fakellm_control.py"
                                                      passepartout-test-root)))))
      (make-directory (expand-file-name "config" directory) t)
      (passepartout-test-wait
       (lambda () (with-current-buffer buffer
                    (save-excursion (goto-char (point-min)) (looking-at ".*\n"))))
       30 "the shared fake model's URL")
      (setq passepartout-test--shared
            (list process
                  (with-current-buffer buffer
                    (goto-char (point-min))
                    (string-trim (buffer-substring (point) (line-end-position))))
                  directory))))
  passepartout-test--shared)

(defun passepartout-test--script (replies)
  "Replace the replies the shared fake model has queued by REPLIES."
  (let* ((process (car (passepartout-test--shared-fake)))
         (buffer (process-buffer process)))
    (with-current-buffer buffer (erase-buffer))
    (process-send-string process (concat (json-encode (or replies [])) "\n"))
    (passepartout-test-wait
     (lambda () (with-current-buffer buffer
                  (save-excursion (goto-char (point-min)) (looking-at "ok\n"))))
     10 "the fake model to take its script")))

(defun passepartout-test--cleanup-shared ()
  "Stop the shared fake model and delete its state directory."
  (when passepartout-test--shared
    (when (process-live-p (car passepartout-test--shared))
      (delete-process (car passepartout-test--shared)))
    (ignore-errors (delete-directory (nth 2 passepartout-test--shared) t))
    (setq passepartout-test--shared nil)))

(add-hook 'kill-emacs-hook #'passepartout-test--cleanup-shared)

(defun passepartout-test-call-with-shared-server (replies body)
  "Call BODY with the shared server, its fake model now serving REPLIES.
BODY receives the state directory.  The server stays up for the next test
\(the model layer loads once); a test may kill and restart it."
  (let* ((shared (passepartout-test--shared-fake))
         (passepartout-python-command passepartout-test-python)
         (passepartout-server-directory passepartout-test-root)
         (passepartout-server-environment
          (passepartout-test--server-environment (nth 2 shared) (nth 1 shared)))
         (passepartout-chat-buffer-name "*passepartout-test*"))
    (passepartout-test--script replies)
    (unless (and passepartout-test--shared-running (passepartout-live-p))
      (passepartout-stop)
      (passepartout-test--start-server)
      (setq passepartout-test--shared-running t))
    (unwind-protect (funcall body (nth 2 shared))
      (passepartout-test--kill-chat-buffers))))

(defmacro passepartout-test-with-shared-server (replies &rest body)
  "Run BODY with the shared server behind the fake model, now serving REPLIES.
The variable `state-dir' holds the server's state directory."
  (declare (indent 1) (debug t))
  `(passepartout-test-call-with-shared-server
    ,replies (lambda (state-dir) (ignore state-dir) ,@body)))

(defmacro passepartout-test-with-server (replies &rest body)
  "Run BODY with the real server behind a fake model serving REPLIES.
The variable `state-dir' holds the temporary state directory."
  (declare (indent 1) (debug t))
  `(passepartout-test-call-with-server ,replies (lambda (state-dir) (ignore state-dir) ,@body)))

(defun passepartout-test-prompt (buffer text)
  "Write TEXT as the prompt of chat BUFFER, send it and return the turn."
  (with-current-buffer buffer
    (goto-char (point-max))
    (insert text)
    (passepartout-chat-send)))

(defun passepartout-test-wait-turn (turn &optional timeout)
  "Wait until TURN has ended, at most TIMEOUT seconds; return its state."
  (passepartout-test-wait (lambda () (not (passepartout-turn-live-p turn)))
                          (or timeout 60) "the end of the turn")
  (passepartout-turn-state turn))

;;;; Text that would run code in org, and the proof that none ran

(defvar passepartout-test-ran nil
  "What of `passepartout-test-hostile' ran: the names its sexps push here.")

(defconst passepartout-test-hostile
  (concat
   "-*- eval: (push 'prop-line passepartout-test-ran) -*-\n"
   "Plan:\n:PROPERTIES:\n:CRON: <2026-01-01 Thu 09:00 +1d>\n:END:\n"
   "* Not a heading\nSCHEDULED: <%%(progn (push 'scheduled passepartout-test-ran) t)>\n"
   "#+CALL: pwn()\n#+BEGIN_SRC emacs-lisp :results silent\n"
   "(push 'babel passepartout-test-ran)\n#+END_SRC\n"
   "Meet <%%(progn (push 'agenda passepartout-test-ran) t)> or "
   "[%%(progn (push 'inactive passepartout-test-ran) t)]\n"
   "%%(progn (push 'diary passepartout-test-ran) t)\n"
   "&%%(progn (push 'diary-amp passepartout-test-ran) t)\n"
   "src_emacs-lisp{(push 'inline passepartout-test-ran)} call_pwn() "
   "[[elisp:(push 'link passepartout-test-ran)][click]] "
   "elisp:(push 'plain passepartout-test-ran) [[shell:touch /tmp/pwned]] [[pwn:x]]\n"
   "{{{pwn(1)}}}\n#+MACRO: pwn (eval (push 'macro passepartout-test-ran))\n"
   "#+SETUPFILE: /tmp/evil.org\n#+INCLUDE: /etc/passwd\n#+BIND: x 1\n"
   "#+PROPERTY: header-args :eval yes\n#+HEADER: :var x=(push 'header passepartout-test-ran)\n"
   "#+TBLFM: $1='(push 'tblfm passepartout-test-ran)\n"
   "#+LINK: pwn elisp:(push 'abbrev passepartout-test-ran)\n"
   "# Local Var" "iables:\n# eval: (push 'locals passepartout-test-ran)\n# End:\n")
  "A reply holding every org construct that runs code, each pushing its name.")

(defun passepartout-test-assert-inert (file)
  "Open FILE as org, build the agenda over it, and fail if anything in it ran.
File-local variables are applied as a person who allows them all would;
nothing in it may be org structure of the reply, or code org would run."
  (let ((passepartout-test-ran nil)
        (enable-local-variables :all)
        (enable-local-eval t)
        (org-agenda-files (list file))
        (org-agenda-span 'week)
        (org-link-elisp-confirm-function nil)
        (org-link-shell-confirm-function nil))
    (with-current-buffer (find-file-noselect file)
      (let ((buffer (current-buffer)))
	(unwind-protect
            (progn
              (hack-local-variables)
              (org-mode)
              (org-agenda-list nil "2026-01-01")
              (org-todo-list)
              (let ((tree (org-element-parse-buffer)))
		(dolist (type '(babel-call inline-babel-call inline-src-block
					   diary-sexp macro property-drawer node-property))
                  (should (equal (list type)
				 (cons type (org-element-map tree type
							     (lambda (e) (org-element-property :begin e)))))))
		;; Source blocks only as the chat writes them: shown, never run.
		(should-not (org-element-map tree 'src-block
					     (lambda (b) (and (not (string-match-p
								    ":eval no" (or (org-element-property
										    :parameters b)
										   "")))
							      b))))
		(should-not (org-element-map tree 'keyword
					     (lambda (k) (and (not (member (org-element-property :key k)
									   '("TITLE" "PASSEPARTOUT_SESSION")))
							      k))))
		(should-not (org-element-map tree 'link
					     (lambda (l) (and (not (member (org-element-property :type l)
									   '("http" "https" "file" "id"
									     "passepartout" "fuzzy")))
							      l))))
		;; No link a #+LINK: abbreviation could expand ([[word:...]], [[word]]).
		(should-not (org-element-map tree 'link
					     (lambda (l) (and (equal (org-element-property :type l) "fuzzy")
							      (string-match-p
							       "\\`[[:alnum:]_+.-]+\\(?::\\|\\'\\)"
							       (org-element-property :path l))
							      l)))))
              (should-not passepartout-test-ran))
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer)
          (when (get-buffer "*Org Agenda*") (kill-buffer "*Org Agenda*")))))))

(provide 'passepartout-test-helpers)
;;; passepartout-test-helpers.el ends here
