;;; passepartout-chat-test.el --- Tests of the chat buffer without a server  -*- lexical-binding: t; -*-

;;; Commentary:

;; The chat buffer driven by the server's callbacks called directly, with
;; `passepartout-call' replaced by a recorder: layout, streaming at the
;; marker while the person types, stale turns, tool drawers, denials and
;; the turn's state machine.

;;; Code:

(require 'passepartout-test-helpers)
(require 'org-element)

(defvar passepartout-chat-test--calls nil
  "What the chat asked of the server, newest first.")

(defmacro passepartout-chat-test-with-buffer (&rest body)
  "Run BODY in a fresh chat buffer; what it asks of the server is recorded."
  (declare (indent 0) (debug t))
  `(let ((passepartout-chat-test--calls nil)
         (buffer (generate-new-buffer "*passepartout-chat-test*")))
     (cl-letf (((symbol-function 'passepartout-call)
                (lambda (method args &optional _cb _eb)
                  (push (cons method args) passepartout-chat-test--calls)))
               ((symbol-function 'passepartout-live-p) #'always))
       (unwind-protect
           (with-current-buffer buffer
             (org-mode)
             (passepartout-chat-mode 1)
             ,@body)
         (with-current-buffer buffer (set-buffer-modified-p nil))
         (kill-buffer buffer)))))

(defun passepartout-chat-test--send (text)
  "Type TEXT as the prompt and send it; return the turn."
  (goto-char (point-max))
  (insert text)
  (passepartout-chat-send))

(ert-deftest passepartout-chat-test-turn-state-machine ()
  "Turns move along the table; final states refuse every event."
  (let ((turn (passepartout-turn--make :id "t")))
    (should (eq (passepartout-turn-state turn) 'thinking))
    (should (eq (passepartout-turn-advance turn 'chunk) 'streaming))
    (should (eq (passepartout-turn-advance turn 'tool) 'thinking))
    (should (eq (passepartout-turn-advance turn 'approval) 'waiting))
    (should (eq (passepartout-turn-display-state turn) 'waiting))
    (should (eq (passepartout-turn-advance turn 'answered) 'thinking))
    (should (eq (passepartout-turn-advance turn 'answered) 'thinking))
    (should (eq (passepartout-turn-advance turn 'error) 'error))
    (should (eq (passepartout-turn-advance turn 'done) 'failed))
    (should (eq (passepartout-turn-display-state turn) 'error))
    (should-not (passepartout-turn-live-p turn))
    (dolist (event '(chunk tool approval answered error done cancel fail))
      (should-not (passepartout-turn-advance turn event)))
    (let ((other (passepartout-turn--make :id "u")))
      (should (eq (passepartout-turn-advance other 'cancel) 'cancelled))
      (should (eq (passepartout-turn-display-state other) 'idle))
      (should-not (passepartout-turn-advance other 'chunk)))
    (should (eq (passepartout-turn-display-state nil) 'idle))))

(ert-deftest passepartout-chat-test-layout-and-send ()
  "The buffer gets a session line and a prompt heading; sending lays out the turn."
  (passepartout-chat-test-with-buffer
    (should (string-match-p "\\`#\\+title: Passepartout\n#\\+passepartout_session: [0-9a-f]\\{16\\}\n\n\\* You\n\\'"
                            (buffer-string)))
    (should (eq (passepartout-chat-state) 'idle))
    (should-error (passepartout-chat-send) :type 'user-error)
    (let ((turn (passepartout-chat-test--send "What is 2+2?\n")))
      (should (eq (passepartout-chat-state) 'thinking))
      (should (equal (car passepartout-chat-test--calls)
                     (list 'chat-send passepartout-chat--session (passepartout-turn-id turn)
                           "What is 2+2?" (list :buffer (buffer-name)))))
      (should (string-match-p "\\* You\nWhat is 2\\+2\\?\n\\* Passepartout\n\n\\* You\n\\'"
                              (buffer-string)))
      (should (= (point) (point-max))))))

(ert-deftest passepartout-chat-test-model-in-context ()
  "A chosen model goes with the prompt."
  (let ((passepartout-model "openai/gpt-4o-mini"))
    (passepartout-chat-test-with-buffer
      (passepartout-chat-test--send "hi")
      (should (equal (nth 4 (car passepartout-chat-test--calls))
                     (list :model "openai/gpt-4o-mini" :buffer (buffer-name)))))))

(ert-deftest passepartout-chat-test-streams-at-marker-while-typing ()
  "Chunks land in the reply even while the person types the next prompt."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "tell me"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn)))
      (passepartout--on-chunk session id "Hello")
      (should (eq (passepartout-chat-state) 'streaming))
      (goto-char (point-max))
      (insert "next question")
      (passepartout--on-chunk session id ", world.\n* not a heading\n")
      (passepartout--on-chunk session id "* nor this")
      (passepartout--on-done session id '(:cancelled nil))
      (should (eq (passepartout-turn-state turn) 'done))
      (should (eq (passepartout-chat-state) 'idle))
      (should (equal (passepartout-turn-reply turn)
                     "Hello, world.\n * not a heading\n * nor this"))
      (should (string-suffix-p "* nor this\n* You\nnext question" (buffer-string)))
      (should (equal (passepartout-chat--prompt-text) "next question")))))

(ert-deftest passepartout-chat-test-reply-cannot-run-code ()
  "Links that run code and a local variables list are inert, even cut in chunks."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "a link?"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn))
           (said (concat "Click [[el" "isp:(delete-file \"~/notes.org\")][here]] or "
                         "shell:rm${IFS}-rf${IFS}~ or [[SHELL:id][this]], "
                         "[it](elisp:ignore).\n# Local Var" "iables:\n# eval: (kill-emacs)\n"
                         "# End:\n")))
      (dolist (chunk (list (substring said 0 11) (substring said 11 70)
                           (substring said 70 150) (substring said 150)))
        (passepartout--on-chunk session id chunk))
      (passepartout--on-done session id nil)
      (let ((text (buffer-string)))
        (should-not (string-match-p "\\(?:elisp\\|shell\\):" text))
        (should-not (string-match-p "Local Variables:" text))
        (should (string-search "notes.org" text))
        ;; It reads as written: only zero-width spaces went in.
        (let ((read (string-replace "\u200b" "" (passepartout-turn-reply turn))))
          (dolist (part '("Click [[elisp:(delete-file \"~/notes.org\")][here]] or "
                          "shell:rm${IFS}-rf${IFS}~ or [[SHELL:id][this]], "
                          "(elisp:ignore)" "Local Variables:" "eval: (kill-emacs)"))
            (should (string-search part read)))))
      (goto-char (point-min))
      (while (re-search-forward org-link-any-re nil t)
        (should-not (member (org-element-property :type (org-element-context))
                            '("elisp" "shell")))))))

(ert-deftest passepartout-chat-test-reply-opens-no-drawer ()
  "A reply's drawer, keyword or sexp lines are text, cut in chunks or resumed."
  (let ((said (concat "Done.\n:PROPERTIES:\n:CRON: <2026-01-01 Thu 09:00 +1d>\n"
                      ":END:\n  #+CALL: pwn()\nSCHEDULED: <2026-01-01>\n%%(pwn)\n"
                      ",:kept: as the model wrote it\n"))
        (file (make-temp-file "passepartout-chat-" nil ".org")))
    (unwind-protect
        (dolist (resume '(nil t))
          (passepartout-chat-test-with-buffer
            (if resume
                (passepartout-chat--insert-history
                 `((:role "assistant" :content ,said)))
              (let* ((turn (passepartout-chat-test--send "a job?"))
                     (session passepartout-chat--session)
                     (id (passepartout-turn-id turn)))
                ;; Cut inside ":PROP|ERTIES:", ":CR|ON:", "#|+CALL" and "%|%(".
                (dolist (chunk (list (substring said 0 8) (substring said 8 19)
                                     (substring said 19 24) (substring said 24 59)
                                     (substring said 59 80) (substring said 80 83)
                                     (substring said 83)))
                  (passepartout--on-chunk session id chunk))
                (passepartout--on-done session id nil)))
            (let ((text (buffer-string)))
              (should (string-search
                       (concat "Done.\n,:PROPERTIES:\n,:CRON: <2026-01-01 Thu 09:00 +1d>\n"
                               ",:END:\n  ,#+CALL: pwn()\n,SCHEDULED: <2026-01-01>\n"
                               "%\u200b%(pwn)\n,:kept: as the model wrote it\n")
                       text))
              (let ((tree (org-element-parse-buffer)))
                (dolist (type '(property-drawer node-property drawer planning
                                babel-call diary-sexp))
                  (should-not (org-element-map tree type #'identity))))
              (with-temp-file file (insert text))
              (passepartout-test-assert-inert file))))
      (delete-file file))))

(ert-deftest passepartout-chat-test-markdown-to-org ()
  "Markdown becomes org; code, drawers and org markup are left alone."
  (with-temp-buffer
    (insert "# Plan\n"
            "Run `make test` and read **the log**, __twice__; see [docs](https://x.org/a).\n"
            "Keep `a ~ b` and `**not bold**` as code.\n"
            ":TOOL:\n- args :: (:text \"**kept**\")\n:END:\n"
            "```python\nprint(\"**kept**\")\n# kept\n```\n"
            "``` \nplain `kept`\n```\n"
            "#+begin_quote\nalready org\n#+end_quote\n"
            "```sh\nls")
    (passepartout-chat-markdown-to-org (point-min) (point-max))
    (should (equal (buffer-string)
                   (concat
                    "*Plan*\n"
                    "Run ~make test~ and read *the log*, *twice*; see [[https://x.org/a][docs]].\n"
                    "Keep =a ~ b= and ~**not bold**~ as code.\n"
                    ":TOOL:\n- args :: (:text \"**kept**\")\n:END:\n"
                    "#+begin_src python :eval no\nprint(\"**kept**\")\n# kept\n#+end_src\n"
                    "#+begin_example\nplain `kept`\n#+end_example\n"
                    "#+begin_quote\nalready org\n#+end_quote\n"
                    "#+begin_src sh :eval no\nls\n#+end_src\n")))))

(ert-deftest passepartout-chat-test-reply-markdown-rewritten-at-the-end ()
  "A fence cut between chunks streams as it comes and is org once the turn ends."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "code?"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn)))
      (dolist (chunk '("Here, **bold**:\n``" "`elisp\n(+ 1 2)\n`" "``\nDone."))
        (passepartout--on-chunk session id chunk))
      (should (string-search "```elisp" (passepartout-turn-reply turn)))
      (passepartout--on-done session id nil)
      (should (equal (passepartout-turn-reply turn)
                     "Here, *bold*:\n#+begin_src elisp :eval no\n(+ 1 2)\n#+end_src\nDone."))
      (should (string-suffix-p "Done.\n* You\n" (buffer-string)))))
  (let ((passepartout-chat-convert-markdown nil))
    (passepartout-chat-test-with-buffer
      (let* ((turn (passepartout-chat-test--send "code?"))
             (id (passepartout-turn-id turn)))
        (passepartout--on-chunk passepartout-chat--session id "**as is**")
        (passepartout--on-done passepartout-chat--session id nil)
        (should (equal (passepartout-turn-reply turn) " **as is**"))))))

(ert-deftest passepartout-chat-test-stale-events-dropped ()
  "Events of a cancelled or older turn, or another turn id, change nothing."
  (passepartout-chat-test-with-buffer
    (let* ((first (passepartout-chat-test--send "one"))
           (session passepartout-chat--session))
      (passepartout--on-chunk session (passepartout-turn-id first) "partial")
      (passepartout-chat-cancel)
      (should (member (list 'chat-cancel session (passepartout-turn-id first))
                      passepartout-chat-test--calls))
      (should (eq (passepartout-chat-state) 'idle))
      (let ((text (buffer-string)))
        (passepartout--on-chunk session (passepartout-turn-id first) "late")
        (passepartout--on-done session (passepartout-turn-id first) '(:cancelled t))
        (passepartout--on-chunk session "not-a-turn" "forged")
        (passepartout--on-chunk "other-session" (passepartout-turn-id first) "elsewhere")
        (should (equal (buffer-string) text))
        (should (= passepartout-chat-dropped 3)))
      (should (string-match-p "partial\n/Cancelled\\./\n" (passepartout-turn-reply first)))
      ;; A newer prompt cancels the turn still running.
      (let ((second (passepartout-chat-test--send "two")))
        (let ((third (passepartout-chat-test--send "three")))
          (should (eq (passepartout-turn-state second) 'cancelled))
          (passepartout--on-chunk session (passepartout-turn-id second) "old")
          (passepartout--on-chunk session (passepartout-turn-id third) "new")
          (should (equal (passepartout-turn-reply third) "new"))
          (should-not (string-match-p "old" (passepartout-turn-reply second))))))))

(ert-deftest passepartout-chat-test-bidi-shown ()
  "Bidi controls in a reply or a tool's output are shown, not obeyed."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "name it"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn)))
      (passepartout--on-chunk session id "evil \u202etxt.exe\u202c ok")
      (passepartout--on-tool session id '(:event tool-result :name "read-file" :ok t
                                          :output "a\u2066b" :call-id "c1"))
      (passepartout--on-done session id nil)
      (should (string-search "evil \\u202etxt.exe\\u202c ok" (buffer-string)))
      (should (string-search "a\\u2066b" (buffer-string)))
      (should-not (string-match-p "[\u202a-\u202e\u2066-\u2069]" (buffer-string))))))

(ert-deftest passepartout-chat-test-tool-drawer-folded ()
  "A tool call and its result share one folded :TOOL: drawer, escaped."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "read it"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn)))
      (passepartout--on-chunk session id "Let me look.")
      (passepartout--on-tool session id '(:event tool :name "read-file"
                                          :args (:path "/tmp/a") :call-id "c1"))
      (should (eq (passepartout-chat-state) 'thinking))
      (passepartout--on-tool session id '(:event tool-result :name "read-file" :ok t
                                          :output "* heading in a file\n:END:\n#+begin_src"
                                          :call-id "c1"))
      (passepartout--on-chunk session id "It says hi.")
      (passepartout--on-done session id nil)
      (should (equal (passepartout-turn-reply turn)
                     (concat "Let me look.\n:TOOL:\n- tool :: read-file\n"
                             "- args :: (:path \"/tmp/a\")\n- result :: ok\n"
                             "#+begin_example\n,* heading in a file\n,:END:\n,#+begin_src\n"
                             "#+end_example\n:END:\nIt says hi.")))
      (goto-char (point-min))
      (search-forward ":TOOL:")
      (should-not (invisible-p (line-beginning-position)))
      (forward-line 1)
      (should (invisible-p (point)))
      ;; Still one reply heading and one prompt heading after it.
      (should (= (how-many "^\\* " (point-min) (point-max)) 3)))))

(ert-deftest passepartout-chat-test-denied-and-error-lines ()
  "Denials and errors are visible lines saying what and why."
  (passepartout-chat-test-with-buffer
    (let* ((turn (passepartout-chat-test--send "do it"))
           (session passepartout-chat--session)
           (id (passepartout-turn-id turn)))
      (passepartout--on-chunk session id "Trying")
      (passepartout--on-tool session id '(:event denied :name "shell rm -rf /"
                                          :reason "policy: destructive command"))
      (should (string-match-p "Trying\n\\*Denied:\\* shell rm -rf / — policy: destructive command\n"
                              (passepartout-turn-reply turn)))
      (passepartout--on-error session id "llm-error" "the provider said 500")
      (should (eq (passepartout-chat-state) 'error))
      (passepartout--on-done session id nil)
      (should (eq (passepartout-turn-state turn) 'failed))
      (should (eq (passepartout-chat-state) 'error))
      (should (string-match-p "\\*Error:\\* llm-error: the provider said 500"
                              (passepartout-turn-reply turn)))
      (should (equal (passepartout-chat--mode-line) " [error]")))))

(ert-deftest passepartout-chat-test-server-exit-fails-live-turns ()
  "When the server goes away, a live turn ends in error."
  (passepartout-chat-test-with-buffer
    (let ((turn (passepartout-chat-test--send "hello")))
      (run-hook-with-args 'passepartout-server-exit-functions "The server exited: killed")
      (should (eq (passepartout-turn-state turn) 'failed))
      (should (eq (passepartout-chat-state) 'error))
      (should (string-match-p "server exited: killed" (passepartout-turn-reply turn))))))

(ert-deftest passepartout-chat-test-stop-fails-live-turns ()
  "Stopping the server ends a live turn instead of leaving it thinking."
  (passepartout-chat-test-with-buffer
    (let ((turn (passepartout-chat-test--send "hello"))
          (passepartout--state 'ready))
      (passepartout-stop)
      (should (eq (passepartout-turn-state turn) 'failed))
      (should (string-match-p "server was stopped" (passepartout-turn-reply turn))))))

(ert-deftest passepartout-chat-test-sessions-are-independent ()
  "Two chat buffers have their own session ids and turns."
  (passepartout-chat-test-with-buffer
    (let ((other (generate-new-buffer "*passepartout-chat-test-2*"))
          (turn (passepartout-chat-test--send "first")))
      (unwind-protect
          (let ((other-turn (with-current-buffer other
                              (org-mode) (passepartout-chat-mode 1)
                              (passepartout-chat-test--send "second"))))
            (should-not (equal (passepartout-turn-session turn)
                               (passepartout-turn-session other-turn)))
            (passepartout--on-chunk (passepartout-turn-session other-turn)
                                    (passepartout-turn-id other-turn) "for two")
            (should (equal (passepartout-turn-reply other-turn) "for two"))
            (should (equal (passepartout-turn-reply turn) ""))
            (should (eq (passepartout-chat-state other) 'streaming))
            (should (eq (passepartout-chat-state) 'thinking)))
        (kill-buffer other)))))

(ert-deftest passepartout-chat-test-session-line-is-reused ()
  "A buffer holding a session line keeps that session id."
  (let ((buffer (generate-new-buffer "*passepartout-chat-test-resume*")))
    (unwind-protect
        (with-current-buffer buffer
          (insert "#+title: old chat\n#+passepartout_session: abc123\n\n* You\n")
          (org-mode)
          (passepartout-chat-mode 1)
          (should (equal passepartout-chat--session "abc123"))
          (should (eq (gethash "abc123" passepartout-chat--sessions) buffer))
          (passepartout-chat--insert-history '((:role :user :content "hi")
                                               (:role :assistant :content nil)
                                               (:role :tool :content "secret output")
                                               (:role "assistant" :text "* hello\n")))
          (should (string-match-p "\\* You\nhi\n\\* Passepartout\n \\* hello\n\\* You\n\\'"
                                  (buffer-string))))
      (kill-buffer buffer))
    (should-not (gethash "abc123" passepartout-chat--sessions))))

(provide 'passepartout-chat-test)
;;; passepartout-chat-test.el ends here
