;;; emacs_onscreen.el --- When a reply's text is in a buffer  -*- lexical-binding: t; -*-

;;; Commentary:

;; The turn bench (bench/emacs_bridge.el) stops every client's clock at the
;; same moment: when the whole text of the reply is in the client's buffer.
;; `passepartout-bench-watch' notes that moment with a buffer-local
;; `after-change-functions' entry, in the change that completes the text,
;; whatever the client does afterwards (convert Markdown, wait for its HTTP
;; client to exit, run its own hooks).

;;; Code:

(defun passepartout-bench-watch (buffer text)
  "Watch BUFFER for TEXT appearing in full after its current end.
Return a watch, a cons whose car is nil until the change that completes
TEXT, then that change's `float-time'.  Text already in BUFFER does not
count.  The watch removes itself once it has fired; call
`passepartout-bench-unwatch' to drop one that has not."
  (with-current-buffer buffer
    (let* ((watch (list nil))
           (from (copy-marker (point-max)))
           (hook nil))
      (setq hook
            (lambda (&rest _)
              (when (and (null (car watch))
                         (save-excursion
                           (goto-char from)
                           (let ((case-fold-search nil))
                             (search-forward text nil t))))
                (setcar watch (float-time))
                (remove-hook 'after-change-functions hook t)
                (set-marker from nil))))
      (setcdr watch (cons buffer hook))
      (add-hook 'after-change-functions hook nil t)
      watch)))

(defun passepartout-bench-unwatch (watch)
  "Stop WATCH, a value of `passepartout-bench-watch', if it still watches."
  (let ((buffer (cadr watch)) (hook (cddr watch)))
    (when (buffer-live-p buffer)
      (with-current-buffer buffer
        (remove-hook 'after-change-functions hook t)))))

(provide 'emacs_onscreen)
;;; emacs_onscreen.el ends here
