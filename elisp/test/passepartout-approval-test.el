;;; passepartout-approval-test.el --- Tests of approvals and emacs-eval  -*- lexical-binding: t; -*-

;;; Commentary:

;; Approvals asked through a bound `passepartout-approval-function', with
;; the answers recorded instead of sent: yes, no, a failing function, the
;; timeout, and the emacs-eval door that asks twice before evaluating.

;;; Code:

(require 'passepartout-test-helpers)

(defvar passepartout-approval-test--answers nil
  "The approval answers sent, newest first.")

(defvar passepartout-approval-test--evaluated nil
  "Set by code that emacs-eval runs.")

(defmacro passepartout-approval-test-with (function &rest body)
  "Run BODY with FUNCTION answering approvals and answers recorded."
  (declare (indent 1) (debug t))
  `(let ((passepartout-approval-test--answers nil)
         (passepartout-approval-function ,function)
         (passepartout-approval--queue nil)
         (passepartout-approval--asking nil))
     (cl-letf (((symbol-function 'passepartout-call)
                (lambda (method args &optional _cb _eb)
                  (push (cons method args) passepartout-approval-test--answers)))
               ((symbol-function 'passepartout-live-p) #'always))
       ,@body)))

(defun passepartout-approval-test--answer-of (id)
  "Wait for the answer sent for approval ID and return it."
  (passepartout-test-wait
   (lambda () (cl-find id passepartout-approval-test--answers :key #'cadr :test #'equal))
   10 (format "the answer to %s" id))
  (nth 2 (cl-find id passepartout-approval-test--answers :key #'cadr :test #'equal)))

(ert-deftest passepartout-approval-test-yes-and-no ()
  "The function's answer is sent: non-nil is t, nil is nil."
  (let ((asked nil))
    (passepartout-approval-test-with
        (lambda (description info) (push (list description info) asked)
          (and (string-match-p "read-file" description) t))
      (passepartout--on-approval "a1" "s" "t" "read-file /etc/hosts" '(:kind read-file))
      (passepartout--on-approval "a2" "s" "t" "shell rm -rf ~" '(:kind shell))
      ;; Asked from a timer: nothing happened inside the callback itself.
      (should-not asked)
      (should (eq (passepartout-approval-test--answer-of "a1") t))
      (should (eq (passepartout-approval-test--answer-of "a2") nil))
      (should (equal (mapcar #'car (reverse asked))
                     '("read-file /etc/hosts" "shell rm -rf ~"))))))

(ert-deftest passepartout-approval-test-failing-function-denies ()
  "An approval function that signals an error denies, and says why."
  (passepartout-approval-test-with (lambda (_d _i) (error "Broken"))
    (passepartout--on-approval "a3" "s" "t" "write-file x" nil)
    (should (equal (passepartout-approval-test--answer-of "a3")
                   '(:allow nil :reason "the approval function failed: Broken")))))

(ert-deftest passepartout-approval-test-quit-denies-and-says-so ()
  "A question quit with \\[keyboard-quit] is a no that says it was quit."
  (passepartout-approval-test-with (lambda (_d _i) (signal 'quit nil))
    (passepartout--on-approval "a5" "s" "t" "write-file y" nil)
    (should (equal (passepartout-approval-test--answer-of "a5")
                   '(:allow nil :reason "quit")))))

(ert-deftest passepartout-approval-test-timeout-denies ()
  "No answer within `passepartout-approval-timeout' is a denial."
  (let ((passepartout-approval-timeout 0.3) (answered nil))
    (add-hook 'passepartout-approval-answer-functions
              (lambda (&rest args) (setq answered args)))
    (unwind-protect
        (passepartout-approval-test-with
            (lambda (_d _i)
              ;; A person who never answers: wait far past the timeout.
              (let ((deadline (+ (float-time) 5)))
                (while (< (float-time) deadline) (accept-process-output nil 0.05)))
              t)
          (let ((start (float-time)))
            (passepartout--on-approval "a4" "s" "t" "shell make" nil)
            (should (equal (passepartout-approval-test--answer-of "a4")
                           '(:allow nil :reason "no answer in time")))
            (should (< (- (float-time) start) 3))
            (should (equal (nth 5 answered) "no answer in time"))
            ;; Exactly one answer, even after the function returns.
            (passepartout-test-wait (lambda () (not passepartout-approval--asking)) 10)
            (should (= (cl-count "a4" passepartout-approval-test--answers
                                 :key #'cadr :test #'equal)
                       1))))
      (setq passepartout-approval-answer-functions
            (cl-remove-if #'functionp passepartout-approval-answer-functions))
      (add-hook 'passepartout-approval-answer-functions
                #'passepartout-chat--approval-answered))))

(ert-deftest passepartout-approval-test-eval-asks-twice ()
  "The emacs-eval door runs only after a second yes, shown the code."
  (let ((questions nil)
        (code "(setq passepartout-approval-test--evaluated (+ 40 2))"))
    ;; Yes, then no: nothing is evaluated.
    (setq passepartout-approval-test--evaluated nil)
    (let ((replies (list t nil)))
      (passepartout-approval-test-with
          (lambda (description info) (push (list description info) questions) (pop replies))
        (passepartout--on-approval "e1" "s" "t" "emacs-eval" (list :kind 'emacs-eval :code code))
        (should (eq (passepartout-approval-test--answer-of "e1") nil))
        (should-not passepartout-approval-test--evaluated)
        (should (= (length questions) 2))
        (should (string-match-p (regexp-quote code) (caar questions)))
        (should (eq (plist-get (cadar questions) :kind) 'emacs-eval-confirm))))
    ;; Yes, yes: evaluated here, and the value is the answer.
    (passepartout-approval-test-with (lambda (_d _i) t)
      (passepartout--on-approval "e2" "s" "t" "emacs-eval" (list :kind 'emacs-eval :code code))
      (should (equal (passepartout-approval-test--answer-of "e2") '(:ok t :value "42")))
      (should (= passepartout-approval-test--evaluated 42)))
    ;; Code that fails is reported, not raised.
    (passepartout-approval-test-with (lambda (_d _i) t)
      (passepartout--on-approval "e3" "s" "t" "emacs-eval"
                                 '(:kind emacs-eval :code "(car 1)"))
      (let ((answer (passepartout-approval-test--answer-of "e3")))
        (should (eq (plist-get answer :ok) nil))
        (should (string-match-p "wrong-type-argument\\|Wrong type" (plist-get answer :value)))))))

(ert-deftest passepartout-approval-test-eval-refused-at-first-question ()
  "A first no never shows the second question."
  (let ((count 0))
    (passepartout-approval-test-with (lambda (_d _i) (cl-incf count) nil)
      (passepartout--on-approval "e4" "s" "t" "emacs-eval" '(:kind emacs-eval :code "(ding)"))
      (should (eq (passepartout-approval-test--answer-of "e4") nil))
      (should (= count 1)))))

(ert-deftest passepartout-approval-test-minibuffer-shows-action ()
  "The default question names the exact action."
  (let ((prompt nil))
    (cl-letf (((symbol-function 'read-answer) (lambda (p _answers) (setq prompt p) "yes")))
      (should (eq (passepartout-approval-ask-minibuffer "shell ls" '(:kind shell)) t))
      (should (string-match-p "shell ls" prompt)))
    (cl-letf (((symbol-function 'read-answer) (lambda (_p _answers) "always")))
      (should (eq (passepartout-approval-ask-minibuffer "shell ls" '(:kind shell)) 'always)))
    (cl-letf (((symbol-function 'read-answer) (lambda (_p _answers) "never")))
      (should (eq (passepartout-approval-ask-minibuffer "shell ls" '(:kind shell)) 'never)))
    (cl-letf (((symbol-function 'yes-or-no-p) (lambda (p) (setq prompt p) nil)))
      (should-not (passepartout-approval-ask-minibuffer
                   "Evaluate this Emacs Lisp in your Emacs now?\n\n(ding)\n"
                   '(:kind emacs-eval-confirm :code "(ding)")))
      (should (string-match-p "passepartout-approval" prompt)))))

(ert-deftest passepartout-approval-test-once-only-offers-no-always ()
  "A question the server says counts once (a write that runs later) has no always."
  (let (prompt answers)
    (cl-letf (((symbol-function 'read-answer)
               (lambda (p a) (setq prompt p answers (mapcar #'car a)) "yes")))
      (should (eq (passepartout-approval-ask-minibuffer
                   "write-file .envrc"
                   '(:kind write-file :once "asked as code (this file runs later: .envrc)"))
                  t))
      (should (string-match-p "Once only: asked as code (this file runs later" prompt))
      (should-not (member "always" answers))
      (should (member "never" answers)))
    (cl-letf (((symbol-function 'read-answer)
               (lambda (_p a) (setq answers (mapcar #'car a)) "yes")))
      (passepartout-approval-ask-minibuffer "write-file notes.txt" '(:kind write-file))
      (should (member "always" answers)))))

(ert-deftest passepartout-approval-test-chat-shows-waiting-and-outcome ()
  "The chat buffer waits for approval, then says what was decided."
  (let ((buffer (generate-new-buffer "*passepartout-approval-test*")))
    (unwind-protect
        (passepartout-approval-test-with (lambda (_d _i) nil)
          (with-current-buffer buffer
            (org-mode)
            (passepartout-chat-mode 1)
            (goto-char (point-max))
            (insert "write it")
            (let ((turn (passepartout-chat-send)))
              (passepartout--on-approval "a5" passepartout-chat--session
                                         (passepartout-turn-id turn)
                                         "write-file /tmp/x" '(:kind write-file))
              (should (eq (passepartout-chat-state) 'waiting))
              (passepartout-approval-test--answer-of "a5")
              (should (eq (passepartout-chat-state) 'thinking))
              (should (string-match-p "Not approved:\\* write-file /tmp/x (refused)"
                                      (passepartout-turn-reply turn)))
              ;; The server's denial of the same action is not said twice.
              (passepartout--on-tool passepartout-chat--session (passepartout-turn-id turn)
                                     '(:event denied :name "write-file" :reason "refused"))
              (should-not (string-match-p "Denied" (passepartout-turn-reply turn)))
              (passepartout--on-tool passepartout-chat--session (passepartout-turn-id turn)
                                     '(:event denied :name "shell" :reason "policy"))
              (should (string-match-p "Denied:\\* shell — policy"
                                      (passepartout-turn-reply turn))))))
      (with-current-buffer buffer (set-buffer-modified-p nil))
      (kill-buffer buffer))))

(ert-deftest passepartout-approval-test-chat-says-a-long-action-short ()
  "A long action answered is said in the chat on one short line."
  (let ((buffer (generate-new-buffer "*passepartout-approval-test*"))
        (long (concat "propose-skill(file_name='g.org', content='"
                      (make-string 3000 ?x) "') — selfimprove: a diff\n+x")))
    (unwind-protect
        (passepartout-approval-test-with (lambda (_d _i) t)
          (with-current-buffer buffer
            (org-mode)
            (passepartout-chat-mode 1)
            (goto-char (point-max))
            (insert "improve yourself")
            (let ((turn (passepartout-chat-send)))
              (passepartout--on-approval "a9" passepartout-chat--session
                                         (passepartout-turn-id turn) long
                                         '(:kind propose-skill))
              (should (eq (passepartout-approval-test--answer-of "a9") t))
              (let ((reply (passepartout-turn-reply turn)))
                (should (string-match "^Approved: propose-skill(file_name='g.org'.*…$" reply))
                (should (< (length (match-string 0 reply)) 220))))))
      (with-current-buffer buffer (set-buffer-modified-p nil))
      (kill-buffer buffer))))

;;;; What is shown is what runs

(ert-deftest passepartout-approval-test-bidi-is-shown ()
  "Bidi and invisible characters in an action are shown, not obeyed.
Emacs displays text after U+202E right to left: code shown with it would
read otherwise than it runs."
  (let* ((code "(message \"ok\") ;; \u202e)\"x\" elif-eteled(\u202c \u200b")
         (question (passepartout-approval--eval-question code))
         (described (passepartout-approval-describe
                     "emacs-eval" (list :kind 'emacs-eval :code code))))
    (dolist (text (list question described))
      (should-not (string-match-p "[\u202e\u202c\u200b]" text))
      (should (string-search ";; \\u202e)\"x\" elif-eteled(\\u202c \\u200b" text)))
    (should (equal (passepartout-visible "plain (+ 1 2) é") "plain (+ 1 2) é"))))

;;;; A long action reads as what it is

(ert-deftest passepartout-approval-test-diff-reads-as-a-diff ()
  "A proposed skill's diff is shown once, whole, before the arguments.
A multi-line argument is a block whose every line is marked, so no line
of it can pass for another argument."
  (let ((text (passepartout-approval-describe
               "propose-skill(file_name='g.org', content='* A\\n') — selfimprove: x"
               (list :kind 'propose-skill :tool "propose-skill"
                     :args (list :file_name "g.org" :content "* A\nfile_name: forged\n")
                     :reasons (list "selfimprove: new:\n--- /dev/null\n+++ b/g.org\n+* A"
                                    "dispatcher: high impact")
                     :digest "d"))))
    (should (string-prefix-p "propose-skill\nwhy:\n- selfimprove: new:\n  --- /dev/null\n" text))
    (should (string-search "\n  +++ b/g.org\n  +* A\n- dispatcher: high impact\n" text))
    (should (string-search "\nfile_name: \"g.org\"\ncontent:\n  | * A\n  | file_name: forged" text))
    (should-not (string-search "\\n" text))
    (should-not (string-search "digest" text))
    (should-not (string-search "selfimprove" text (1+ (string-search "selfimprove" text))))))

;;;; Asked the way a terminal frame asks

(ert-deftest passepartout-approval-test-asked-in-the-minibuffer ()
  "From a timer on a terminal frame the question is not a dialog.
There `last-nonmenu-event' is nil, which makes `yes-or-no-p' and
`y-or-n-p' pop up a dialog: a tty menu whose RET means Yes."
  (let ((seen nil)
        (use-dialog-box t)
        (last-nonmenu-event nil)
        (last-input-event ?\C-m))
    (passepartout-approval-test-with
        (lambda (_d _i) (push (list use-dialog-box last-nonmenu-event) seen) t)
      (passepartout--on-approval "m1" "s" "t" "shell ls" '(:kind shell))
      (should (eq (passepartout-approval-test--answer-of "m1") t))
      (should (equal seen '((nil t)))))))

(ert-deftest passepartout-approval-test-only-t-is-yes ()
  "A question that returns anything but t is a no, at both doors."
  (dolist (reply '("no" "yes" 0 no (t)))
    (let ((id (format "%S" reply)))
      (passepartout-approval-test-with (lambda (_d _i) reply)
        (passepartout--on-approval id "s" "t" "shell ls" '(:kind shell))
        (should (eq (passepartout-approval-test--answer-of id) nil)))))
  (setq passepartout-approval-test--evaluated nil)
  (let ((replies (list t "yes")))
    (passepartout-approval-test-with (lambda (_d _i) (pop replies))
      (passepartout--on-approval "e9" "s" "t" "emacs-eval"
                                 '(:kind emacs-eval
                                   :code "(setq passepartout-approval-test--evaluated t)"))
      (should (eq (passepartout-approval-test--answer-of "e9") nil))
      (should-not passepartout-approval-test--evaluated))))

(defun passepartout-approval-test--tty-events (log)
  "Return the forms of LOG, the file the terminal Emacs writes."
  (when (file-exists-p log)
    (with-temp-buffer
      (insert-file-contents log)
      (let (forms)
        (while (not (eobp))
          (unless (looking-at-p "[ \t]*$")
            (push (read (current-buffer)) forms))
          (forward-line 1))
        (nreverse forms)))))

(defun passepartout-approval-test--tty-wait (log count)
  "Wait for form number COUNT (from 0) of LOG and return it."
  (passepartout-test-wait
   (lambda () (nth count (passepartout-approval-test--tty-events log)))
   20 (format "event %d of the terminal Emacs" count)))

(defun passepartout-approval-test--screen (text)
  "Return TEXT, a terminal's output, without its escape sequences."
  (replace-regexp-in-string "\e\\(?:\\[[0-9;?]*[ -/]*[@-~]\\|[()][0-9A-Za-z]\\|[=>78]\\)"
                            "" text))

(ert-deftest passepartout-approval-test-terminal-frame ()
  "In `emacs -nw' both emacs-eval questions are drawn and \"no\" is no.
A terminal Emacs runs on a pseudo-terminal; keys typed into it ask
approvals from a process filter, as the server does, and then answer
them once the minibuffer shows the question."
  (let* ((dir (make-temp-file "passepartout-tty-" t))
         (log (expand-file-name "events" dir))
         (screen "")
         (emacs (expand-file-name invocation-name invocation-directory))
         (process-environment
          (append (list "TERM=xterm" (concat "PASSEPARTOUT_TTY_LOG=" log))
                  process-environment))
         (process
          (make-process
           :name "emacs-nw" :connection-type 'pty :noquery t
           :filter (lambda (_process output) (setq screen (concat screen output)))
           :command (list "sh" "-c" "stty rows 24 cols 100 && exec \"$@\"" "sh"
                          emacs "-nw" "-Q"
                          "-L" (expand-file-name "elisp" passepartout-test-root)
                          "-L" (expand-file-name "elisp/test" passepartout-test-root)
                          "-l" "passepartout-approval-tty")))
         (seen 0))
    (cl-flet ((next () (prog1 (passepartout-approval-test--tty-wait log seen)
                         (cl-incf seen)))
              (type (keys) (setq screen "") (process-send-string process keys))
              (drawn (text) (passepartout-test-wait
                             (lambda () (string-search
                                         text (passepartout-approval-test--screen screen)))
                             10 (format "%S on the screen" text))))
      (unwind-protect
          (progn
            (should (equal (next) '(ready)))
            ;; No to the first question: refused, the second is never asked.
            (type "\C-ca")
            (should (string-match-p "Allow\\? (yes or no) \\'" (cadr (next))))
            (drawn "Allow? (yes or no)")
            (type "no\r")
            (should (equal (next) '(answer "emacs-eval1" nil nil)))
            ;; Yes, then no when shown the code: refused, not evaluated.
            (type "\C-ca")
            (should (string-match-p "Allow\\? (yes or no) \\'" (cadr (next))))
            (type "yes\r")
            (should (string-match-p "(yes or no)" (cadr (next))))
            (drawn "Evaluate this Emacs Lisp in your Emacs now?")
            (drawn "(setq passepartout-approval-tty-evaluated (* 6 7))")
            (type "no\r")
            (should (equal (next) '(answer "emacs-eval2" nil nil)))
            ;; Yes and yes: evaluated, and the value is the answer.
            (type "\C-ca")
            (next)
            (type "yes\r")
            (next)
            (type "yes\r")
            (should (equal (next) '(answer "emacs-eval3" (:ok t :value "42") 42)))
            ;; A short action is one key in the minibuffer too: y, n, ! or N.
            (type "\C-cs")
            (should (string-match-p "shell ls.*(y, n, !, N, \\?) \\'" (cadr (next))))
            (drawn "(y, n, !, N, ?)")
            (type "n")
            (should (equal (next) '(answer "shell4" nil 42)))
            ;; ! allows, and asks the server to keep the yes as a grant.
            (type "\C-cs")
            (next)
            (drawn "(y, n, !, N, ?)")
            (type "!")
            (should (equal (next) '(answer "shell5" (:allow t :always t) 42)))
            ;; N refuses, and asks the server to keep the no.
            (type "\C-cs")
            (next)
            (drawn "(y, n, !, N, ?)")
            (type "N")
            (should (equal (next) '(answer "shell6" (:allow nil :always t) 42))))
        (delete-process process)
        (delete-directory dir t)))))

(provide 'passepartout-approval-test)
;;; passepartout-approval-test.el ends here
