;;; passepartout-notices-test.el --- Notices buffer, mode-line count, approvals mode  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real server: a notice is kept in *passepartout-notices*
;; and counted in the mode line until the buffer is shown; a notice that
;; names a Flight Plan has a button that opens the approvals file at that
;; plan; the approvals file cycles to APPROVED however it was opened (its
;; buffer made before the file existed, then reverted; or visited anew).
;;
;; The notices missed while no client was attached, from a real job's
;; Flight Plan: passepartout-notices-attached.el, which
;; tests/test_notices_emacs.py runs against the daemon it started.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-notices)

(defconst passepartout-notices-test--plan
  (concat "#+TITLE: Passepartout approvals\n"
          "#+TODO: TODO APPROVED | DONE REJECTED CANCELLED\n\n* Grants\n"
          "* TODO shell(cmd=\"ls\")\n  :PROPERTIES:\n  :ID: fp-older-000001\n  :END:\n"
          "* TODO write-file(path=\"report.txt\")\n"
          "  :PROPERTIES:\n  :ID: fp-0a1b2c3d-4e5f60\n  :END:\n")
  "An approvals file with two Flight Plans, as the server writes it.")

(defun passepartout-notices-test--reset ()
  "Forget the notices of an earlier test."
  (when (get-buffer passepartout-notices-buffer-name)
    (kill-buffer passepartout-notices-buffer-name))
  (setq passepartout-notices--unseen 0))

(defun passepartout-notices-test--mode-line ()
  "Return the mode line's notices count as a string, or nil.
\(`format-mode-line' shows nothing in batch: the element is evaluated here.)"
  (when (member passepartout-notices--mode-line-entry global-mode-string)
    (let ((shown (eval (cadr passepartout-notices--mode-line-entry) t)))
      (and shown (string-match "Pp [0-9]+ notices?" shown) (match-string 0 shown)))))

(defun passepartout-notices-test--heading ()
  "Return the current heading line, without properties."
  (buffer-substring-no-properties (line-beginning-position) (line-end-position)))

(ert-deftest passepartout-notices-test-flight-plan-notice-opens-the-plan ()
  "A notice is kept and counted; its Flight Plan button opens that plan.
The approvals buffer, opened before the file existed, cycles to APPROVED."
  (passepartout-test-with-shared-server nil
    (passepartout-notices-test--reset)
    (let* ((file (plist-get (passepartout-call-sync 'status nil) :approvals-file))
           (approvals nil))
      (should (stringp file))
      (when (file-exists-p file) (delete-file file))
      (unwind-protect
          (progn
            ;; Opened before the server wrote the file: then the file appears.
            (setq approvals (passepartout-approvals))
            (should (buffer-local-value 'passepartout-approvals-mode approvals))
            (make-directory (file-name-directory file) t)
            (with-temp-file file (insert passepartout-notices-test--plan))
            (with-current-buffer approvals (revert-buffer t t t))
            ;; A job's Flight Plan, told while the person was elsewhere.
            (switch-to-buffer "*scratch*")
            (passepartout--on-notify
             'warning (concat "cron: Nightly: Flight Plan fp-0a1b2c3d-4e5f60 waits "
                              "for your answer in approvals.org: write-file report.txt"))
            (should (= (passepartout-notices-unseen) 1))
            (should (equal (passepartout-notices-test--mode-line) "Pp 1 notice"))
            (should (string-match-p "1 notice not seen (M-x passepartout-notices)"
                                    (passepartout-status-text 'ready nil)))
            (set-buffer passepartout-notices-buffer-name)
            (should (derived-mode-p 'passepartout-notices-mode))
            (goto-char (point-min))
            (should (search-forward "Flight Plan fp-0a1b2c3d" nil t))
            (let ((button (button-at (match-beginning 0))))
              (should button)
              (should (equal (button-get button 'passepartout-plan) "fp-0a1b2c3d-4e5f60"))
              (push-button (match-beginning 0)))
            ;; The button opened the approvals file at that plan, not the first one.
            (should (eq (current-buffer) approvals))
            (should (equal (passepartout-notices-test--heading)
                           "* TODO write-file(path=\"report.txt\")"))
            (org-todo)
            (should (equal (passepartout-notices-test--heading)
                           "* APPROVED write-file(path=\"report.txt\")"))
            ;; Shown: the count is gone from the mode line.
            (passepartout-notices)
            (should (= (passepartout-notices-unseen) 0))
            (should-not (passepartout-notices-test--mode-line))
            ;; Visited anew (not through the command), it is in the mode too.
            (with-current-buffer approvals (set-buffer-modified-p nil))
            (kill-buffer approvals)
            (setq approvals (find-file-noselect file))
            (with-current-buffer approvals
              (should passepartout-approvals-mode)
              (goto-char (point-min))
              (re-search-forward "^\\* TODO shell")
              (beginning-of-line)
              (org-todo)
              (should (string-prefix-p "* APPROVED shell" (passepartout-notices-test--heading)))))
        (when (buffer-live-p approvals)
          (with-current-buffer approvals (set-buffer-modified-p nil))
          (kill-buffer approvals))
        (when (file-exists-p file) (delete-file file))
        (passepartout-notices-test--reset)))))

(provide 'passepartout-notices-test)
;;; passepartout-notices-test.el ends here
