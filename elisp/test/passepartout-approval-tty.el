;;; passepartout-approval-tty.el --- A terminal Emacs asked approvals, for the tests  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by an `emacs -nw' that passepartout-approval-test.el runs on a
;; pseudo-terminal and types into, the way a person at a terminal frame
;; does.  A key asks an approval from a process filter, as the server's
;; call does: C-c a an `emacs-eval' one (two questions), C-c s a short
;; `shell' one.  The file named by PASSEPARTOUT_TTY_LOG receives one form a
;; line: (ready), (prompt TEXT) for each question read in the minibuffer,
;; and (answer ID VALUE EVALUATED) for each answer sent.

;;; Code:

(require 'cl-lib)
(require 'passepartout-approval)

(defvar passepartout-approval-tty--log (getenv "PASSEPARTOUT_TTY_LOG")
  "The file the events are appended to.")

(defvar passepartout-approval-tty--count 0
  "The number of approvals asked so far.")

(defvar passepartout-approval-tty-evaluated nil
  "Set by the Emacs Lisp an approved `emacs-eval' runs.")

(defun passepartout-approval-tty--write (form)
  "Append FORM to the log, on a line of its own."
  (with-temp-buffer
    (let ((print-escape-newlines t))
      (prin1 form (current-buffer)))
    (insert "\n")
    (write-region nil nil passepartout-approval-tty--log t 'silent)))

(defun passepartout-approval-tty--prompt ()
  "Record the question of the minibuffer just entered."
  (passepartout-approval-tty--write (list 'prompt (minibuffer-prompt))))

(defun passepartout-approval-tty--ask (kind)
  "Ask an approval of KIND (`emacs-eval' or `shell') from a process filter."
  (let* ((id (format "%s%d" kind (cl-incf passepartout-approval-tty--count)))
         (code "(setq passepartout-approval-tty-evaluated (* 6 7))")
         (description (if (eq kind 'emacs-eval)
                          (format "emacs-eval(code=%S)" code)
                        "shell ls"))
         (info (if (eq kind 'emacs-eval) (list :kind 'emacs-eval :code code) '(:kind shell))))
    (make-process :name "passepartout-approval-tty" :command '("echo" "ask")
                  :connection-type 'pipe :noquery t
                  :filter (lambda (_process _output)
                            (passepartout--on-approval id "s" "t" description info)))))

(defun passepartout-approval-tty-eval ()
  "Ask an `emacs-eval' approval, as the server would."
  (interactive)
  (passepartout-approval-tty--ask 'emacs-eval))

(defun passepartout-approval-tty-shell ()
  "Ask a short `shell' approval, as the server would."
  (interactive)
  (passepartout-approval-tty--ask 'shell))

(advice-add 'passepartout-live-p :override #'always)
(advice-add 'passepartout-call :override
            (lambda (_method args &rest _)
              (passepartout-approval-tty--write
               (list 'answer (car args) (cadr args) passepartout-approval-tty-evaluated))))
(add-hook 'minibuffer-setup-hook #'passepartout-approval-tty--prompt)
(global-set-key (kbd "C-c a") #'passepartout-approval-tty-eval)
(global-set-key (kbd "C-c s") #'passepartout-approval-tty-shell)
(add-hook 'emacs-startup-hook (lambda () (passepartout-approval-tty--write '(ready))))

(provide 'passepartout-approval-tty)
;;; passepartout-approval-tty.el ends here
