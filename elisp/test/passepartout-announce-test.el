;;; passepartout-announce-test.el --- The start's announcements  -*- lexical-binding: t; -*-

;;; Commentary:

;; A ready announced while M-x shows its key hint is not lost: the hint's
;; `with-temp-message' puts back the start's message, and the ready line
;; is shown again over it.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'passepartout)

(ert-deftest passepartout-announce-test-ready-shown-again-over-the-start ()
  "The ready line comes back when the start's message is restored."
  (let* ((passepartout--starting-message "Passepartout: starting the daemon...")
         (echo "Passepartout: ready, healthy (started in 1.0 s)")
         (shown nil))
    (cl-letf (((symbol-function 'current-message) (lambda () echo))
              ((symbol-function 'message)
               (lambda (format &rest args)
                 (setq echo (apply #'format-message format args))
                 (push echo shown)
                 echo)))
      (passepartout--keep-announced echo)
      ;; The hint ends and puts the start's message back, with its progress.
      (setq echo "Passepartout: starting the daemon... 2 s")
      (sleep-for 0.7)
      (should (equal shown (list "Passepartout: ready, healthy (started in 1.0 s)")))
      ;; Once shown again, or after a few seconds, nothing more is said.
      (setq echo "Passepartout: starting the daemon...")
      (sleep-for 0.7)
      (should (= (length shown) 1)))))

(ert-deftest passepartout-announce-test-other-messages-are-left-alone ()
  "A message of the person's own is never covered by the ready line."
  (let* ((passepartout--starting-message "Passepartout: starting the daemon...")
         (shown nil))
    (cl-letf (((symbol-function 'current-message) (lambda () "Saved file foo.org"))
              ((symbol-function 'message)
               (lambda (format &rest args) (push (apply #'format format args) shown))))
      (unwind-protect
          (progn (passepartout--keep-announced "Passepartout: ready")
                 (sleep-for 1.2)
                 (should-not shown))
        (cancel-timer passepartout--announced-timer)))))

(provide 'passepartout-announce-test)
;;; passepartout-announce-test.el ends here
