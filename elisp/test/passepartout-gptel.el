;;; passepartout-gptel.el --- gptel against Passepartout's OpenAI endpoint  -*- lexical-binding: t; -*-

;;; Commentary:

;; Drives gptel itself (from GPTEL_DIR, never vendored) against a running
;; `passepartout openai' endpoint: a backend made with `gptel-make-openai',
;; a prompt sent with `gptel-send' from an org buffer, and the answer
;; streamed into it.  tests/test_openai_endpoint.py starts the daemon, the
;; endpoint and the fake model, then runs this file in `emacs --batch' with
;; PASSEPARTOUT_OPENAI_PORT and PASSEPARTOUT_OPENAI_TOKEN set; the test is
;; skipped when GPTEL_DIR is not set.  Not named *-test.el: run-tests.el
;; has no endpoint to give it.

;;; Code:

(require 'ert)
(require 'org)

(defvar gptel-backend)
(defvar gptel-model)
(defvar gptel-post-stream-hook)
(defvar gptel-post-response-functions)
(declare-function gptel-make-openai "ext:gptel-openai")
(declare-function gptel-send "ext:gptel")

(defun passepartout-gptel--load ()
  "Load gptel from GPTEL_DIR (and compat, which Emacs 28 needs); nil without it."
  (let ((dir (getenv "GPTEL_DIR")))
    (when (and dir (file-exists-p (expand-file-name "gptel.el" dir)))
      (dolist (compat (append (list (getenv "COMPAT_DIR"))
                              (file-expand-wildcards
                               "/usr/share/emacs/site-lisp/elpa/compat-*")))
        (when (and compat (file-directory-p compat))
          (add-to-list 'load-path compat t)))
      (add-to-list 'load-path (expand-file-name dir))
      (and (require 'gptel nil t) (require 'gptel-openai nil t)))))

(ert-deftest passepartout-gptel-streams-an-answer ()
  "The gptel package streams an answer of the endpoint into an org buffer."
  (skip-unless (passepartout-gptel--load))
  (let* ((port (getenv "PASSEPARTOUT_OPENAI_PORT"))
         (token (getenv "PASSEPARTOUT_OPENAI_TOKEN"))
         (gptel-backend (gptel-make-openai "Passepartout"
                          :host (concat "127.0.0.1:" port) :protocol "http"
                          :endpoint "/v1/chat/completions" :stream t :key token
                          :models '(passepartout)))
         (gptel-model 'passepartout)
         (pieces 0)
         (ended nil))
    (should (and port token))
    (with-temp-buffer
      (org-mode)
      (insert "What is the harbour gate code?")
      (add-hook 'gptel-post-stream-hook (lambda () (setq pieces (1+ pieces))) nil t)
      (add-hook 'gptel-post-response-functions (lambda (&rest _) (setq ended t)) nil t)
      (gptel-send)
      (let ((deadline (+ (float-time) 90)))
        (while (and (not ended) (< (float-time) deadline))
          (accept-process-output nil 0.05)))
      (should ended)
      (should (string-match-p "is 4417" (buffer-string)))
      ;; streamed: the answer came in pieces (it is held to line ends for the mask)
      (should (> pieces 1)))))

(provide 'passepartout-gptel)

;;; passepartout-gptel.el ends here
