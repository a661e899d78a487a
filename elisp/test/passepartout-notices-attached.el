;;; passepartout-notices-attached.el --- Missed notices, attached to a daemon  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by tests/test_notices_emacs.py (not by run-tests.el: it needs
;; the daemon that test started, in its environment), where a job's
;; action became a Flight Plan while no client was attached.  Emacs
;; attaches: the missed notices are in the notices buffer and counted in
;; the mode line, the plan's button opens the approvals file at that
;; plan, and its keyword cycles to APPROVED.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-notices-test)

(ert-deftest passepartout-notices-attached-missed-flight-plan ()
  "Attached after a job's action became a Flight Plan: the notices show it."
  (let ((passepartout-server-lifetime 'persistent)
        (passepartout-python-command passepartout-test-python)
        (passepartout-server-directory passepartout-test-root))
    (passepartout-notices-test--reset)
    (unwind-protect
        (progn
          (passepartout-start)
          (should (passepartout-wait-ready 30))
          (passepartout-test-wait
           (lambda () (and (get-buffer passepartout-notices-buffer-name)
                           (with-current-buffer passepartout-notices-buffer-name
                             (string-match-p "While no client was attached"
                                             (buffer-string)))))
           30 "the missed notices")
          (should (>= (passepartout-notices-unseen) 2))
          (should (passepartout-notices-test--mode-line))
          (set-buffer passepartout-notices-buffer-name)
          (goto-char (point-min))
          (should (re-search-forward "Flight Plan \\(fp-[[:alnum:]-]+\\) waits" nil t))
          (let ((plan (match-string-no-properties 1)))
            (message "passepartout-notices-test: %s" (buffer-string))
            (push-button (match-beginning 0))
            (should passepartout-approvals-mode)
            (goto-char (point-min))
            (should (re-search-forward (concat ":ID: +" (regexp-quote plan)) nil t))
            (org-back-to-heading t)
            (should (string-prefix-p "* TODO " (passepartout-notices-test--heading)))
            (org-todo)
            (should (string-prefix-p "* APPROVED " (passepartout-notices-test--heading)))
            (set-buffer-modified-p nil)
            (kill-buffer))
          (passepartout-notices)
          (should (= (passepartout-notices-unseen) 0)))
      (passepartout-stop)
      (passepartout-notices-test--reset))))

(provide 'passepartout-notices-attached)
;;; passepartout-notices-attached.el ends here
