;;; run-tests.el --- Run the Passepartout ERT tests in batch  -*- lexical-binding: t; -*-

;;; Commentary:

;; From the repository root:
;;
;;   `emacs -Q --batch -L elisp -L elisp/test -l elisp/test/run-tests.el'
;;
;; Loads every elisp/test/*-test.el and runs the tests; the exit status
;; is non-zero when one fails.  PASSEPARTOUT_TEST_SELECTOR, when set, is
;; a regexp of the test names to run.

;;; Code:

(setq load-prefer-newer t)
;; The servers the tests start never see the person's own memex (its approvals file
;; would collect the tests' Flight Plans): a test that wants one binds its own.
(unless (getenv "MEMEX_DIR")
  (setenv "MEMEX_DIR" (make-temp-file "passepartout-test-memex-" t)))
(let ((dir (file-name-directory (or load-file-name buffer-file-name))))
  (add-to-list 'load-path (expand-file-name ".." dir))
  (add-to-list 'load-path dir)
  (dolist (file (directory-files dir t "-test\\.el\\'"))
    (load file nil t)))

(ert-run-tests-batch-and-exit
 (let ((selector (getenv "PASSEPARTOUT_TEST_SELECTOR")))
   (if (and selector (not (string-empty-p selector))) selector t)))

;;; run-tests.el ends here
