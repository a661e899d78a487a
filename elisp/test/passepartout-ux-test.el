;;; passepartout-ux-test.el --- The chat and edits as an Emacs user expects  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real server and the fake model: chat buffers wrap long
;; lines; a reply in place starts a line of its own; a `write-file' is
;; asked with a diff against the file as it is; a rewrite of private
;; text is refused before anything is sent; a subtree's model choice
;; holds for a reply in the chat; a preset's prompt lists only its
;; tools; a reply of the local model says so, with the time it took.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-send)
(require 'passepartout-rewrite)
(require 'passepartout-send-test)

(ert-deftest passepartout-ux-test-chat-wraps-long-lines ()
  "A chat buffer wraps long lines at words: `visual-line-mode' is on."
  (passepartout-test-with-shared-server nil
    (with-current-buffer (passepartout-chat)
      (should visual-line-mode)
      (passepartout-chat-mode -1)
      (should-not visual-line-mode))))

(ert-deftest passepartout-ux-test-reply-in-place-on-its-own-line ()
  "A reply in place asked at the end of a line starts on the next line."
  (passepartout-test-with-shared-server '(((text . "The answer.")))
    (passepartout-send-test-with-notes (expand-file-name "ownline.org" state-dir)
      (goto-char (point-min))
      (search-forward "Ship the release on Friday.")
      (let ((job (passepartout-send-subtree "Reply here" t)))
        (passepartout-test-wait (lambda () (not (eq (passepartout-send-job-state job)
                                                    'running)))
                                60 "the reply in place")
        (should (eq (passepartout-send-job-state job) 'done)))
      (should (string-match-p "^Ship the release on Friday\\.\nThe answer\\.$"
                              (buffer-string))))))

(ert-deftest passepartout-ux-test-write-file-asked-with-a-diff ()
  "Overwriting a file with `write-file' is asked with a diff against the file."
  (let* ((dir (make-temp-file "passepartout-diff-" t))
         (target (expand-file-name "plan.txt" dir))
         (asked nil)
         (passepartout-approval-function
          (lambda (description info)
            (push (passepartout-approval-describe description info) asked)
            nil)))
    (unwind-protect
        (progn
          (with-temp-file target (insert "first line\nold second line\n"))
          (passepartout-test-with-shared-server
              `(((tool_calls . [((name . "write-file")
                                 (arguments . ((path . ,target)
                                               (content . "first line\nnew second line\n"))))]))
                ((text . "I did not write it.")))
            (let ((turn (passepartout-test-prompt (passepartout-chat) "Change the plan")))
              (passepartout-test-wait-turn turn)
              (should asked)
              (let ((text (car asked)))
                (should (string-match-p "^ *-old second line$" text))
                (should (string-match-p "^ *\\+new second line$" text))
                (should (string-match-p "plan.txt (now)" text))))
            (with-temp-buffer
              (insert-file-contents target)
              (should (equal (buffer-string) "first line\nold second line\n")))))
      (delete-directory dir t))))

(ert-deftest passepartout-ux-test-private-rewrite-refused-before-sending ()
  "A rewrite of a region in a @personal subtree is refused before any request.
The reply queued for it is still there for the next turn: the model got nothing."
  (passepartout-test-with-shared-server '(((text . "NEVER-ASKED-FOR")))
    (passepartout-send-test-with-notes (expand-file-name "rewrite-private.org" state-dir)
      (goto-char (point-min))
      (search-forward "Blood results")
      (let ((err (should-error (passepartout-rewrite (line-beginning-position)
                                                     (line-end-position) "shorter")
                               :type 'user-error)))
        (should (string-match-p "nothing was sent.*@personal" (cadr err))))
      (let ((turn (passepartout-test-prompt (passepartout-chat) "Hello")))
        (should (eq (passepartout-test-wait-turn turn) 'done))
        (should (string-match-p "NEVER-ASKED-FOR" (passepartout-turn-reply turn)))))))

(ert-deftest passepartout-ux-test-subtree-model-holds-in-the-chat ()
  "A subtree's PASSEPARTOUT_MODEL chooses the model of a reply sent to the chat."
  (passepartout-test-with-shared-server '(((text . "From the subtree's model.")))
    (let ((path (expand-file-name "subtree-model.org" state-dir)))
      (with-temp-file path
        (insert "* Project\n:PROPERTIES:\n:PASSEPARTOUT_MODEL: openai/subtree-model\n"
                ":END:\n** Task\nShip it.\n"))
      (let ((buffer (let ((org-inhibit-startup t)) (find-file-noselect path))))
        (unwind-protect
            (with-current-buffer buffer
              (goto-char (point-min))
              (search-forward "Ship it")
              (passepartout-send-subtree "What is left?")
              (passepartout-send-test--chat-turn)
              (should (string-match-p "\"model\": *\"subtree-model\""
                                      (passepartout-send-test--last-request))))
          (with-current-buffer buffer (set-buffer-modified-p nil))
          (kill-buffer buffer))))))

(ert-deftest passepartout-ux-test-preset-prompt-lists-only-its-tools ()
  "The system prompt of a turn whose preset allows one tool lists that tool only."
  (passepartout-test-with-shared-server '(((text . "ok")))
    (let* ((passepartout-presets '(("reader" :tools ("read-file"))))
           (buffer (passepartout-chat)))
      (with-current-buffer buffer (setq-local passepartout-preset "reader"))
      (passepartout-test-wait-turn (passepartout-test-prompt buffer "List files"))
      (let ((body (passepartout-send-test--last-request)))
        (should (string-match-p "- read-file" body))
        (should-not (string-match-p "- write-file" body))
        (should-not (string-match-p "- shell" body))))))

(ert-deftest passepartout-ux-test-local-model-says-so ()
  "A reply of the local model says so on its heading and in the header line."
  (passepartout-test-with-shared-server nil
    (let ((buffer (passepartout-chat)))
      (with-current-buffer buffer (setq-local passepartout-model "local/smollm2"))
      (let ((turn (passepartout-test-prompt buffer "Say hello.")))
        (should (eq (passepartout-test-wait-turn turn 240) 'done))
        (with-current-buffer buffer
          (goto-char (passepartout-turn-start turn))
          (forward-line -1)
          (should (looking-at (concat (regexp-quote passepartout-chat-reply-heading)
                                      " (local model local/smollm2, [0-9.]+ s)$")))
          (should (string-match-p "answered by the (local model local/smollm2"
                                  (passepartout-chat--header-line))))))))

(provide 'passepartout-ux-test)
;;; passepartout-ux-test.el ends here
