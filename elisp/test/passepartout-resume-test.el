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
              ((error . 400) (message . "the provider is down")))
          (let* ((buffer (passepartout-chat t))
                 (session (buffer-local-value 'passepartout-chat--session buffer)))
            (dolist (prompt '("Write refused.txt" "Write approved.txt" "Tell me a joke"))
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
                                 "* You" "* Passepartout" "* You")))
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

(provide 'passepartout-resume-test)
;;; passepartout-resume-test.el ends here
