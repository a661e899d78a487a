;;; passepartout-approval.el --- Ask the person before the agent acts  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; When a gate of the server asks the person, the server calls
;; `passepartout--on-approval'.  Emacs asks through
;; `passepartout-approval-function' from a timer (the process filter
;; returns at once), one question at a time, and answers with
;; `approval-answer'.  The question is read in the minibuffer, never in
;; a dialog (from a timer a dialog would be chosen, and on a terminal
;; frame it is a menu whose RET means Yes); only t (once) and `always'
;; (kept as a grant scoped to the action) are a yes, `never' is a no that
;; is kept too, and no answer within `passepartout-approval-timeout'
;; seconds is a denial.
;;
;; The `emacs-eval' tool is the only way code from the server can run in
;; Emacs.  It arrives as an approval whose info says :kind emacs-eval; after
;; the person approves it, `passepartout--eval-approved' shows the code and
;; asks a second time, and only then evaluates it, here, and sends the
;; value back as the answer.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'passepartout)

(defcustom passepartout-approval-request-functions nil
  "Abnormal hook run when the server asks for an approval.
Each function receives APPROVAL-ID, SESSION, TURN, DESCRIPTION and INFO."
  :type 'hook
  :group 'passepartout)

(defcustom passepartout-approval-answer-functions nil
  "Abnormal hook run when an approval is answered.
Each function receives APPROVAL-ID, SESSION, TURN, DESCRIPTION, APPROVED
\(non-nil when the action may run) and REASON: for a no, a string saying
why, or nil; for a yes, \"always\" when it is kept as a grant, else nil."
  :type 'hook
  :group 'passepartout)

(cl-defstruct (passepartout-approval
               (:constructor passepartout-approval--make)
               (:copier nil))
  "One question the server asked."
  id session turn description info timer deadline answered reason)

(defvar passepartout-approval--pending (make-hash-table :test 'equal)
  "Approval id -> the `passepartout-approval' waiting for its answer.")

(defvar passepartout-approval--queue nil
  "Approvals waiting for the one being asked to be answered, oldest first.")

(defvar passepartout-approval--asking nil
  "The approval being asked right now, or nil.")

(defun passepartout-approval-eval-p (info)
  "Return non-nil when INFO describes an `emacs-eval' action."
  (equal (passepartout--name (plist-get info :kind)) "emacs-eval"))

;;;; Entry point from the server

(defun passepartout--on-approval (approval-id session turn description info)
  "Ask the person about APPROVAL-ID of SESSION and TURN: DESCRIPTION, INFO.
Called by the server; the question is asked from a timer."
  (let* ((info (if (listp info) info nil))
         (description (if (stringp description) description (format "%S" description)))
         (approval (passepartout-approval--make
                    :id approval-id :session session :turn turn
                    :description description :info info)))
    (puthash approval-id approval passepartout-approval--pending)
    (setf (passepartout-approval-deadline approval)
          (+ (float-time) passepartout-approval-timeout))
    (setf (passepartout-approval-timer approval)
          (run-at-time passepartout-approval-timeout nil
                       #'passepartout-approval--answer approval nil "no answer in time"))
    (run-hook-with-args 'passepartout-approval-request-functions
                        approval-id session turn description info)
    (setq passepartout-approval--queue
          (append passepartout-approval--queue (list approval)))
    (run-at-time 0 nil #'passepartout-approval--next)))

(defun passepartout-approval--next ()
  "Ask the oldest waiting approval, unless one is being asked.
While the person is using the minibuffer, wait: the question would
interrupt what they type (its timeout still runs)."
  (if (and (active-minibuffer-window) passepartout-approval--queue
           (not passepartout-approval--asking))
      (run-at-time 0.5 nil #'passepartout-approval--next)
    (passepartout-approval--ask-next)))

(defun passepartout-approval--ask-next ()
  "Ask the oldest waiting approval, unless one is being asked."
  (unless passepartout-approval--asking
    (let ((approval (pop passepartout-approval--queue)))
      (while (and approval (passepartout-approval-answered approval))
        (setq approval (pop passepartout-approval--queue)))
      (when approval
        (setq passepartout-approval--asking approval)
        (unwind-protect (passepartout-approval--ask approval)
          (setq passepartout-approval--asking nil)
          (when passepartout-approval--queue
            (run-at-time 0 nil #'passepartout-approval--next)))))))

(defun passepartout-approval--remaining (approval)
  "Return the seconds APPROVAL may still wait, at least a tenth."
  (max 0.1 (- (passepartout-approval-deadline approval) (float-time))))

(defun passepartout-approval--ask (approval)
  "Ask the person about APPROVAL and send the answer."
  (let* ((info (passepartout-approval-info approval))
         (choice (passepartout-approval--consult
                  approval (passepartout-approval-description approval) info)))
    (cond
     ((passepartout-approval-answered approval))
     ((eq choice 'never)
      (passepartout-approval--answer approval '(:allow nil :always t) "refused always"))
     ((not choice)
      ;; A no with a reason of this side (a quit, a failure, no answer in time) says
      ;; it, so that the turn kept for resume says it as it was said here.
      (let ((why (passepartout-approval-reason approval)))
        (passepartout-approval--answer
         approval (and why (list :allow nil :reason why)) (or why "refused"))))
     ((passepartout-approval-eval-p info)
      (let ((result (passepartout--eval-approved (plist-get info :code) approval)))
        (passepartout-approval--answer
         approval result (or (passepartout-approval-reason approval)
                             "refused when shown the code"))))
     ((eq choice 'always) (passepartout-approval--answer approval '(:allow t :always t) nil))
     (t (passepartout-approval--answer approval t nil)))))

(defun passepartout-approval--call-asking (function &rest args)
  "Call FUNCTION with ARGS so that the question it asks is read honestly.
The question is asked from a timer, where `last-nonmenu-event' is nil:
`yes-or-no-p' and `y-or-n-p' then pop up a dialog, which on a terminal
frame is a menu that may not be drawn and whose RET picks its first
item, Yes (a typed \"no\" then counts as yes).  So dialogs are off and
the last event is not a mouse's: the question is read in the minibuffer.
Keys typed before the question was shown are discarded: they were not
meant as its answer."
  (let ((use-dialog-box nil)
        (last-nonmenu-event t))
    (discard-input)
    (apply function args)))

(defun passepartout-approval--consult (approval description info)
  "Call `passepartout-approval-function' with DESCRIPTION and INFO for APPROVAL.
Return t for a yes, `always' for a yes to keep, `never' for a no to
keep: what the function returned.  Any other value is a no, as is a
refusal, a failure, a quit or running out of time; then record why in
APPROVAL and return nil."
  (condition-case err
      (with-timeout ((passepartout-approval--remaining approval)
                     (setf (passepartout-approval-reason approval) "no answer in time")
                     nil)
        (let ((choice (passepartout-approval--call-asking
                       passepartout-approval-function description info)))
          (and (memq choice '(t always never)) choice)))
    (quit (setf (passepartout-approval-reason approval) "quit") nil)
    (error (passepartout--log "approval function failed: %s" (error-message-string err))
           (setf (passepartout-approval-reason approval)
                 (format "the approval function failed: %s" (error-message-string err)))
           nil)))

(defun passepartout-approval--answer (approval answer reason)
  "Send ANSWER to APPROVAL, once; REASON is why it is a denial."
  (unless (passepartout-approval-answered approval)
    (setf (passepartout-approval-answered approval) t)
    (let ((id (passepartout-approval-id approval))
          (timer (passepartout-approval-timer approval)))
      (when (timerp timer) (cancel-timer timer))
      (remhash id passepartout-approval--pending)
      (if (passepartout-live-p)
          (passepartout-call 'approval-answer (list id answer))
        (passepartout--log "approval %s not sent: the server is gone" id))
      (run-hook-with-args 'passepartout-approval-answer-functions
                          id (passepartout-approval-session approval)
                          (passepartout-approval-turn approval)
                          (passepartout-approval-description approval)
                          (passepartout-approval--yes-p answer)
                          (if (passepartout-approval--yes-p answer)
                              (and (consp answer) (plist-get answer :always) "always")
                            reason)))))

(defun passepartout-approval--yes-p (answer)
  "Return non-nil when ANSWER, as sent to the server, is a yes."
  (cond ((eq answer t))
        ((and (consp answer) (plist-member answer :allow)) (plist-get answer :allow))
        (t (consp answer))))

(defun passepartout-approval-cancel-all (reason)
  "Deny every approval still waiting, because of REASON."
  (let (all)
    (maphash (lambda (_id approval) (push approval all)) passepartout-approval--pending)
    (dolist (approval all)
      (passepartout-approval--answer approval nil reason))
    (setq passepartout-approval--queue nil)))

;;;; The second door: Emacs Lisp from the server

(defun passepartout-approval--read-forms (code)
  "Return the forms of CODE, a string; signal an error when it does not read."
  (let ((pos 0) forms)
    (while (string-match-p "[^ \t\n\r]" code pos)
      (let ((next (read-from-string code pos)))
        (push (car next) forms)
        (setq pos (cdr next))))
    (nreverse forms)))

(defun passepartout--eval-approved (code &optional approval)
  "Show CODE, ask again, and evaluate it in Emacs only when confirmed.
APPROVAL is the approval it belongs to, for the time left.  Return
\(:ok t :value TEXT) or (:ok nil :value ERROR) after evaluating, and nil
when the person refuses or CODE is not a string."
  (when (and (stringp code)
             (if approval
                 (memq (passepartout-approval--consult
                        approval (passepartout-approval--eval-question code)
                        (list :kind 'emacs-eval-confirm :code code))
                       '(t always))
               (eq (passepartout-approval--call-asking
                    passepartout-approval-function
                    (passepartout-approval--eval-question code)
                    (list :kind 'emacs-eval-confirm :code code))
                   t)))
    (condition-case err
        (let ((forms (passepartout-approval--read-forms code)))
          (passepartout--log "evaluating approved Emacs Lisp: %s" code)
          (list :ok t :value (let ((print-length 50) (print-level 8))
                               (prin1-to-string (eval (cons 'progn forms) t)))))
      (error (list :ok nil :value (error-message-string err))))))

(defun passepartout-approval--eval-question (code)
  "Return the second question asked before evaluating CODE."
  (format "Evaluate this Emacs Lisp in your Emacs now?\n\n%s\n"
          (passepartout-visible code)))

;;;; The default way to ask

(defun passepartout-approval--block (text prefix)
  "Return TEXT with PREFIX before each of its lines but the first.
So no line of a value can pass for a line of the question itself."
  (replace-regexp-in-string "\n" (concat "\n" prefix) text t t))

(defun passepartout-approval--value (key value)
  "Return the line or lines showing argument KEY with VALUE.
A string of several lines is a block whose every line starts with \"  | \"."
  (if (and (stringp value) (string-search "\n" value))
      (format "%s:\n  | %s" key (passepartout-approval--block
                                (string-trim-right value "\n") "  | "))
    (format "%s: %s" key (passepartout-approval--block (prin1-to-string value) "  | "))))

(defun passepartout-approval-describe (description info)
  "Return the full text shown for DESCRIPTION and INFO.
When INFO names the tool, DESCRIPTION only repeats INFO on one line
\(a file's content with its newlines escaped, the reasons after it):
then the tool comes first, its reasons next, each whole, so that a
proposed skill's diff reads as a diff, then each argument, a string of
several lines as an indented block."
  (let ((tool (plist-get info :tool))
        (lines nil))
    (if (not tool)
        (push description lines)
      (push (passepartout--name tool) lines)
      (when-let ((reasons (plist-get info :reasons)))
        (push "why:" lines)
        (dolist (reason (if (listp reasons) reasons (list reasons)))
          (push (concat "- " (passepartout-approval--block
                              (if (stringp reason) reason (prin1-to-string reason)) "  "))
                lines)))
      (let ((args (plist-get info :args)))
        (cond ((null args))
              ((and (listp args) (keywordp (car args)))
               (cl-loop for (key value) on args by #'cddr
                        do (push (passepartout-approval--value
                                  (substring (symbol-name key) 1) value)
                                 lines)))
              (t (push (passepartout-approval--value "args" args) lines)))))
    (cl-loop for (key value) on info by #'cddr
             unless (memq key '(:kind :digest :tool :args :reasons))
             do (push (format "%s: %s" (substring (symbol-name key) 1)
                              (if (stringp value) value (prin1-to-string value)))
                      lines))
    (passepartout-visible (mapconcat #'identity (nreverse lines) "\n"))))

(defun passepartout-approval-ask-minibuffer (description info)
  "Ask in the minibuffer whether the action DESCRIPTION with INFO may run.
A long action is shown in full in a help window first.  Code to evaluate
in Emacs needs a typed \"yes\"."
  (let* ((text (passepartout-approval-describe description info))
         (long (or (string-search "\n" text) (> (length text) 70)))
         (question (format "Passepartout wants to %s  Allow? "
                           (if long "do what the *passepartout-approval* window shows."
                             (concat text ".")))))
    (if (string-prefix-p "emacs-eval" (passepartout--name (plist-get info :kind)))
        (save-window-excursion
          (with-output-to-temp-buffer "*passepartout-approval*"
            (princ text))
          (yes-or-no-p question))
      (if (not long)
          (passepartout-approval--choose question (plist-get info :once))
        (save-window-excursion
          (with-output-to-temp-buffer "*passepartout-approval*"
            (princ text))
          (passepartout-approval--choose question (plist-get info :once)))))))

(defun passepartout-approval--choose (question &optional once)
  "Ask QUESTION with four answers; t, `always', `never' or nil.
y allows once, n refuses once, ! allows always and N refuses always
\(a standing grant scoped to this action, kept by the server).  ONCE,
the server's reason why a yes can count only once (a write that runs
later, a capture), leaves \"always\" out and is shown with QUESTION."
  (let ((read-answer-short t))  ; one key, read in the minibuffer
    (pcase (read-answer
            (if (stringp once)
                (concat (passepartout-visible (format "[Once only: %s] " once)) question)
              question)
            `(("yes" ?y "allow this once")
              ("no" ?n "refuse this once")
              ,@(unless (stringp once)
                  '(("always" ?! "allow, and allow the same action from now on")))
              ("never" ?N "refuse, and refuse the same action from now on")))
      ("yes" t)
      ("always" 'always)
      ("never" 'never)
      (_ nil))))

(defun passepartout-approval--server-exited (_what)
  "Deny the approvals still waiting: the server that asked is gone."
  (passepartout-approval-cancel-all "the server went away"))

(add-hook 'passepartout-server-exit-functions #'passepartout-approval--server-exited)

(provide 'passepartout-approval)
;;; passepartout-approval.el ends here
