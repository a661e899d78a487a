;;; org_repeat_oracle.el --- mark repeated tasks DONE with real org-mode  -*- lexical-binding: t; -*-

;; Usage: emacs --batch -Q -l org_repeat_oracle.el CASES-FILE
;;
;; Each line of CASES-FILE is "ZONE<TAB>NOW<TAB>TIMESTAMP", NOW being seconds
;; since the epoch.  For each case this script sets the time zone, sets the
;; clock through libfaketime (the process must run with
;; LD_PRELOAD=libfaketime, FAKETIME_NO_CACHE=1, FAKETIME_FMT=%s and
;; FAKETIME_TIMESTAMP_FILE naming a file it may rewrite: libfaketime reads
;; that file again on every clock call; epoch seconds keep it independent of
;; the zone and of ambiguous wall-clock times),
;; marks "* TODO job" with "SCHEDULED: TIMESTAMP" DONE with `org-todo', and
;; prints one line: "OK<TAB>NEW-SCHEDULED<TAB>ASKED" or "ERR<TAB>MESSAGE".
;; NEW-SCHEDULED is the rest of the planning line (a date range stays whole);
;; ASKED is the number of y-or-n questions org asked.  The first line printed
;; is "ORG<TAB>VERSION".

(require 'org)

(defvar org-repeat-oracle--asked 0
  "How many questions org asked during the current case.")

(defun org-repeat-oracle--set-clock (zone now)
  "Use time zone ZONE and make the process clock read NOW (epoch seconds)."
  (set-time-zone-rule zone)
  (let ((file (getenv "FAKETIME_TIMESTAMP_FILE")))
    (unless file (error "FAKETIME_TIMESTAMP_FILE is not set"))
    (with-temp-file file (insert now "\n")))
  (let ((seen (format-time-string "%s")))
    (unless (equal seen now)
      (error "Clock reads %s, wanted %s (is libfaketime preloaded?)" seen now))))

(defun org-repeat-oracle--run (timestamp)
  "Mark a TODO scheduled at TIMESTAMP DONE and return its new SCHEDULED."
  (with-temp-buffer
    (let ((org-log-done nil)
          (org-log-repeat nil)
          (org-todo-repeat-to-state nil)
          (org-todo-keywords '((sequence "TODO" "|" "DONE"))))
      (org-mode)
      (insert "* TODO job\nSCHEDULED: " timestamp "\n")
      (goto-char (point-min))
      ;; A `++' repeater far behind makes org ask whether to go on past
      ;; ten shifts; batch Emacs would read the answer from stdin and fail.
      ;; Answer yes, as a person catching up would, and count the question.
      (cl-letf (((symbol-function 'y-or-n-p)
                 (lambda (&rest _) (cl-incf org-repeat-oracle--asked) t))
                ((symbol-function 'yes-or-no-p)
                 (lambda (&rest _) (cl-incf org-repeat-oracle--asked) t)))
        (org-todo "DONE"))
      (goto-char (point-min))
      (let ((state (org-get-todo-state)))
        (unless (equal state "TODO")
          (error "State is %s after the repeat, not TODO" state))
        (unless (re-search-forward "^SCHEDULED: \\(.*\\)$" nil t)
          (error "No SCHEDULED line left"))
        (string-trim (match-string-no-properties 1))))))

(defun org-repeat-oracle-main (cases-file)
  "Answer every case of CASES-FILE on standard output."
  (princ (format "ORG\t%s\n" (org-version)))
  (with-temp-buffer
    (insert-file-contents cases-file)
    (dolist (line (split-string (buffer-string) "\n" t))
      (let ((fields (split-string line "\t")))
        (setq org-repeat-oracle--asked 0)
        (condition-case err
            (progn
              (org-repeat-oracle--set-clock (nth 0 fields) (nth 1 fields))
              (let ((new (org-repeat-oracle--run (nth 2 fields))))
                (princ (format "OK\t%s\t%d\n" new org-repeat-oracle--asked))))
          (error
           (princ (format "ERR\t%s\n"
                          (replace-regexp-in-string
                           "[\t\n]" " " (error-message-string err))))))))))

(org-repeat-oracle-main (car command-line-args-left))
(setq command-line-args-left nil)

;;; org_repeat_oracle.el ends here
