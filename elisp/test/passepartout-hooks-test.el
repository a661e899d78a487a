;;; passepartout-hooks-test.el --- The shipped hooks, from an edit in Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real server and the fake model: a heading edited in an org
;; buffer with `passepartout-org-mode' fires the shipped hooks it names.
;; `notify' comes back to Emacs as a notification and goes into events.org;
;; `prompt' with :HOOK_OUTPUT: note runs the heading's body at its tier and
;; writes the reply under the heading, once (the agent's own note fires
;; nothing again).  `snapshot' takes a memory snapshot, `verify-integrity'
;; warns that the heading changed outside the agent, and `summarize' writes
;; the cognition model's summary into the heading's :SUMMARY:.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-org)

(defconst passepartout-hooks-test-text
  "#+TITLE: Hooked
* Work
** Release
:PROPERTIES:
:ID: release-1
:HOOK: notify
:END:
Draft.
** Question
:PROPERTIES:
:ID: question-1
:HOOK: prompt
:TIER: cognition
:HOOK_OUTPUT: note
:END:
What colour is the sky?
"
  "The org file the tests edit.")

(defun passepartout-hooks-test-log-has (regexp)
  "Non-nil when the *passepartout-log* buffer matches REGEXP."
  (with-current-buffer (passepartout--log-buffer)
    (save-excursion
      (goto-char (point-min))
      (re-search-forward regexp nil t))))

(defun passepartout-hooks-test-file-has (file regexp)
  "Non-nil when FILE on disk matches REGEXP."
  (and (file-exists-p file)
       (with-temp-buffer
         (insert-file-contents file)
         (goto-char (point-min))
         (re-search-forward regexp nil t))))

(ert-deftest passepartout-hooks-test-notify-and-prompt-from-emacs ()
  "Edit hooked headings in Emacs: a notification, and a reply as a note."
  (let* ((dir (make-temp-file "passepartout-hooks-test-" t))
         (memex (expand-file-name "memex" dir))
         ;; Outside the scanned directories: only Emacs tells the server.
         (file (expand-file-name "elsewhere/hooked.org" memex))
         ;; The person's yes to each hooked heading the server is told of (asked once).
         (passepartout-approval-function (lambda (_description _info) t))
         (process-environment (append (list (concat "MEMEX_DIR=" memex) "TZ=UTC")
                                      process-environment)))
    (make-directory (file-name-directory file) t)
    (with-temp-file file (insert passepartout-hooks-test-text))
    (unwind-protect
        (passepartout-test-with-server '(((text . "Blue, on a clear day.")))
          (let ((buffer (find-file-noselect file))
                (events (expand-file-name "home/events.org" state-dir)))
            (unwind-protect
                (with-current-buffer buffer
                  (passepartout-org-mode 1)
                  ;; notify: a notification in Emacs, a line in events.org.
                  (goto-char (org-find-exact-headline-in-buffer "Release" nil t))
                  (org-end-of-meta-data t)
                  (insert "Reviewed.\n")
                  (save-buffer)
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-log-has
                               "notify info: hook: notify: 'Release' changed (emacs)"))
                   30 "the notification")
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               events "hook: notify: 'Release' changed (emacs)"))
                   10 "the line in events.org")
                  ;; prompt: the reply goes under the heading as a note.
                  (goto-char (org-find-exact-headline-in-buffer "Question" nil t))
                  (org-end-of-meta-data t)
                  (insert "Answer in a few words.\n")
                  (save-buffer)
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               file "^- Reply of the agent \\[.*\\] \\\\\\\\\n  Blue, on a clear day\\.$"))
                   30 "the reply under the heading")
                  (revert-buffer t t)
                  (goto-char (org-find-exact-headline-in-buffer "Question" nil t))
                  (should (string-match-p "Blue, on a clear day\\."
                                          (buffer-substring (point) (point-max))))
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               events "prompt: wrote a note under 'Question'"))
                   10 "the note's line in events.org")
                  ;; One reply, one note: the agent's note fired no second run.
                  (sleep-for 0.5)
                  (with-temp-buffer
                    (insert-file-contents file)
                    (should (= (how-many "Reply of the agent" (point-min) (point-max)) 1))))
              (with-current-buffer buffer (set-buffer-modified-p nil))
              (kill-buffer buffer))))
      (delete-directory dir t))))

;;;; snapshot, verify-integrity and summarize

(defconst passepartout-hooks-test-more-text
  "#+TITLE: Hooked too
* Work
** Ledger
:PROPERTIES:
:ID: ledger-1
:HOOK: snapshot verify-integrity
:END:
Amount: 100
** Release plan
:PROPERTIES:
:ID: plan-1
:HOOK: summarize
:END:
Ship the release.
*** Tests
Write them first.
"
  "The org file the second test edits.")

(ert-deftest passepartout-hooks-test-snapshot-verify-summarize-from-emacs ()
  "Edit hooked headings in Emacs: a snapshot, a warning, and a summary."
  (let* ((dir (make-temp-file "passepartout-hooks-test-" t))
         (memex (expand-file-name "memex" dir))
         (file (expand-file-name "elsewhere/hooked.org" memex))
         ;; The person's yes to each hooked heading the server is told of (asked once).
         (passepartout-approval-function (lambda (_description _info) t))
         (process-environment (append (list (concat "MEMEX_DIR=" memex) "TZ=UTC")
                                      process-environment)))
    (make-directory (file-name-directory file) t)
    (with-temp-file file (insert passepartout-hooks-test-more-text))
    (unwind-protect
        (passepartout-test-with-server '(((text . "Release after the tests.")))
          (let ((buffer (find-file-noselect file))
                (events (expand-file-name "home/events.org" state-dir)))
            (unwind-protect
                (with-current-buffer buffer
                  (passepartout-org-mode 1)
                  ;; Memory opens after the server is ready: the hooks need it.
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               (expand-file-name "home/passepartout.log" state-dir)
                               "memory: imported [0-9]+ file"))
                   30 "memory's import of the memex")
                  ;; snapshot and verify-integrity: a snapshot named after the
                  ;; heading, and a warning that it changed outside the agent.
                  (goto-char (org-find-exact-headline-in-buffer "Ledger" nil t))
                  (re-search-forward "Amount: 100")
                  (replace-match "Amount: 900")
                  (save-buffer)
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               events "memory snapshot #[0-9]+ ([0-9]+ nodes, root "))
                   30 "the snapshot's line in events.org")
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-log-has
                               "warning.*'Ledger' .*changed outside the agent"))
                   30 "the warning in Emacs")
                  ;; summarize: the summary lands in the heading's :SUMMARY:.
                  (goto-char (org-find-exact-headline-in-buffer "Release plan" nil t))
                  (re-search-forward "Ship the release\\.")
                  (replace-match "Ship the release on Friday.")
                  (save-buffer)
                  (passepartout-test-wait
                   (lambda () (passepartout-hooks-test-file-has
                               file ":SUMMARY: Release after the tests\\."))
                   30 "the summary in the heading")
                  (revert-buffer t t)
                  (goto-char (org-find-exact-headline-in-buffer "Release plan" nil t))
                  (should (equal (org-entry-get (point) "SUMMARY")
                                 "Release after the tests.")))
              (with-current-buffer buffer (set-buffer-modified-p nil))
              (kill-buffer buffer))))
      (delete-directory dir t))))

(provide 'passepartout-hooks-test)
;;; passepartout-hooks-test.el ends here
