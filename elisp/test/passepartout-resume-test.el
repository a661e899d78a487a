;;; passepartout-resume-test.el --- A resumed chat reads as it was shown  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real server and the fake model: a chat with a refused
;; call, an approved one and an error is resumed from the server's
;; session (its buffer gone): each turn comes back under one reply
;; heading, the person's answer to each approval as the line the chat
;; said (allowed always, or not approved and why), the approved call in
;; its folded :TOOL: drawer with its result, the error as the error
;; line, and no reply heading is empty: the resumed chat reads as the
;; live one did.

;;; Code:

(require 'passepartout-test-helpers)

(defun passepartout-resume-test--headings (text)
  "Return the headings of TEXT, in order."
  (let ((found nil) (start 0))
    (while (string-match "^\\* .*$" text start)
      (push (match-string 0 text) found)
      (setq start (match-end 0)))
    (nreverse found)))

(defun passepartout-resume-test--lines (text)
  "Return the lines of TEXT that are not blank."
  (split-string text "\n" t "[ \t]*"))

(ert-deftest passepartout-resume-test-every-turn-comes-back-as-shown ()
  "Refused and approved calls, replies and an error come back when resumed."
  (let* ((dir (make-temp-file "passepartout-resume-" t))
         (live nil)
         (refused (expand-file-name "refused.txt" dir))
         (approved (expand-file-name "approved.txt" dir))
         (passepartout-approval-function
          (lambda (description _info)
            (and (string-match-p "approved\\.txt" description) 'always))))
    (unwind-protect
        (passepartout-test-with-shared-server
            `(((tool_calls . [((name . "write-file")
                               (arguments . ((path . ,refused) (content . "no"))))]))
              ((text . "I did not write it."))
              ((tool_calls . [((name . "write-file")
                               (arguments . ((path . ,approved) (content . "yes"))))]))
              ((text . "Written."))
              ((tool_calls . [((name . "read-file")
                               (arguments . ((path . "~/.ssh/id_rsa"))))]))
              ((text . "I may not read it."))
              ((error . 400) (message . "the provider is down")))
          (let* ((buffer (passepartout-chat t))
                 (session (buffer-local-value 'passepartout-chat--session buffer)))
            (dolist (prompt '("Write refused.txt" "Write approved.txt" "Read my key"
                              "Tell me a joke"))
              (passepartout-test-wait-turn (passepartout-test-prompt buffer prompt) 60))
            (should (file-exists-p approved))
            (should-not (file-exists-p refused))
            (setq live (with-current-buffer buffer
                         (buffer-substring-no-properties (point-min) (point-max))))
            (with-current-buffer buffer (set-buffer-modified-p nil))
            (kill-buffer buffer)
            (let ((resumed (passepartout-chat--resume-from-server session)))
              (passepartout-test-wait
               (lambda () (with-current-buffer resumed
                            (string-match-p "\\*Error:\\*" (buffer-string))))
               30 "the resumed history")
              (let ((text (with-current-buffer resumed
                            (buffer-substring-no-properties (point-min) (point-max)))))
                (message "passepartout-resume-test: %s" text)
                ;; One reply heading per turn, none empty, the prompt heading last.
                (should (equal (passepartout-resume-test--headings text)
                               '("* You" "* Passepartout" "* You" "* Passepartout"
                                 "* You" "* Passepartout" "* You" "* Passepartout"
                                 "* You")))
                (should-not (string-match-p "^\\* Passepartout\n\\(\n\\|\\* \\)" text))
                ;; The answers to the approvals, in the words the chat said them.
                (should (string-match-p
                         (concat "\\* You\nWrite refused.txt\n\\* Passepartout\n"
                                 "\\*Not approved:\\* write-file(path='[^\n]*refused\\.txt'"
                                 "[^\n]* (refused)\nI did not write it\\.\n")
                         text))
                (should (string-match-p
                         (concat "\\* You\nWrite approved.txt\n\\* Passepartout\n"
                                 "Approved always: write-file(path='[^\n]*approved\\.txt'"
                                 "[^\n]*\n"
                                 ":TOOL:\n- tool :: write-file\n- args :: .*approved\\.txt.*\n"
                                 "- result :: ok\n#\\+begin_example\n[^\n]*\n#\\+end_example\n"
                                 ":END:\nWritten\\.\n")
                         text))
                ;; A call the gates refused without asking: its denial line.
                (should (string-match-p
                         (concat "\\* You\nRead my key\n\\* Passepartout\n"
                                 "\\*Denied:\\* read-file(path='~/.ssh/id_rsa') — [^\n]+\n"
                                 "I may not read it\\.\n")
                         text))
                (should (string-match-p
                         (concat "\\* You\nTell me a joke\n\\* Passepartout\n"
                                 "\\*Error:\\* [^\n]*the provider is down")
                         text))
                ;; Line for line what the live chat showed (blank lines aside: the
                ;; live chat leaves one after an error).
                (should (equal (passepartout-resume-test--lines text)
                               (passepartout-resume-test--lines live)))
                ;; The drawer is folded, as it was when the reply came.
                (with-current-buffer resumed
                  (goto-char (point-min))
                  (search-forward ":TOOL:")
                  (forward-line 1)
                  (should (invisible-p (point))))))))
      (delete-directory dir t))))

(ert-deftest passepartout-resume-test-answers-given-elsewhere-or-not-at-all ()
  "A kept answer given in another face says which; one nobody gave says why."
  (let ((buffer (generate-new-buffer "*passepartout-resume-test*")))
    (unwind-protect
        (with-current-buffer buffer
          (org-mode)
          (passepartout-chat-mode 1)
          (passepartout-chat--insert-history
           (list '(:role :user :content "Build and deploy")
                 '(:role :assistant :content ""
                   :tool-calls ((:call-id "c1" :name "shell" :arguments "{\"cmd\": \"make\"}")
                                (:call-id "c2" :name "shell"
                                 :arguments "{\"cmd\": \"make deploy\"}")))
                 '(:role :approval :call-id "c1" :name "shell(cmd='make')"
                   :content "shell(cmd='make') — asked" :answer "allowed" :always nil
                   :by "tui" :reason "")
                 '(:role :approval :call-id "c2" :name "shell(cmd='make deploy')"
                   :content "shell(cmd='make deploy') — asked" :answer "denied"
                   :always nil :by "" :reason "no answer in time")
                 '(:role :tool :call-id "c1" :content "exit code 0")
                 '(:role :tool :call-id "c2"
                   :content "refused by policy (ask): shell: not on the allow-list")
                 '(:role :assistant :content "Built, not deployed.")))
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (should (string-match-p
                     (concat "^\\* Passepartout\n"
                             "Approved: shell(cmd='make') — asked \\[answered in tui\\]\n"
                             "\\*Not approved:\\* shell(cmd='make deploy') — asked"
                             " (no answer in time)\n"
                             ":TOOL:\n- tool :: shell\n- args :: (:cmd \"make\")\n")
                     text))
            ;; The refusal was said by the answer's line: not a second time.
            (should-not (string-match-p "Denied" text))
            (should (string-match-p ":END:\nBuilt, not deployed\\.\n" text))))
      (with-current-buffer buffer (set-buffer-modified-p nil))
      (kill-buffer buffer))))

(provide 'passepartout-resume-test)
;;; passepartout-resume-test.el ends here
