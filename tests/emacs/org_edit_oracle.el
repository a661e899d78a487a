;;; org_edit_oracle.el --- make org edits with org-mode's own commands  -*- lexical-binding: t; -*-

;; Usage: emacs --batch -Q -l org_edit_oracle.el CASES-FILE
;;
;; CASES-FILE is a JSON list of cases.  Each case names a directory holding
;; the case's org files, the file to edit, an operation and its arguments.
;; The script visits the file, runs org's own command for the operation with
;; org's default settings (the clock is pinned by libfaketime), saves every
;; buffer it touched and prints "OK<TAB>DIR" or "ERR<TAB>DIR<TAB>MESSAGE".
;; Headings are addressed as the tools address them: "id:X" by :ID:, else an
;; outline path "A/B/C".  The first line printed is "ORG<TAB>VERSION".

(require 'org)
(require 'org-archive)
(require 'org-refile)
(require 'org-capture)
(require 'json)
(require 'cl-lib)

(defun org-edit-oracle--goto (address)
  "Move to the heading at ADDRESS in the current buffer."
  (goto-char
   (if (string-prefix-p "id:" address)
       (or (org-find-property "ID" (substring address 3))
           (error "No heading with ID %s" address))
     (org-find-olp (split-string address "/") t))))

(defun org-edit-oracle--get (case key)
  "The value of KEY in CASE (an alist from JSON)."
  (cdr (assq key case)))

(defun org-edit-oracle--heading (case)
  "Insert the new heading CASE describes at point (after `org-insert-heading')."
  (let ((level (org-edit-oracle--get case 'level))
        (todo (org-edit-oracle--get case 'todo))
        (tags (append (org-edit-oracle--get case 'tags) nil))
        (props (org-edit-oracle--get case 'properties))
        (body (org-edit-oracle--get case 'body)))
    (while (< (org-current-level) level) (org-do-demote))
    (insert (org-edit-oracle--get case 'title))
    (when todo (org-todo todo))
    (when tags (org-set-tags tags))
    (dolist (prop props)
      (org-set-property (symbol-name (car prop)) (cdr prop)))
    (when (and body (not (string-empty-p body)))
      ;; Org has no command for body text: it is typed after the meta data.
      (org-end-of-meta-data)
      (unless (bolp) (insert "\n"))
      (insert body "\n"))))

(defun org-edit-oracle--run (case)
  "Run the org command CASE names."
  (let* ((op (org-edit-oracle--get case 'op))
         (address (org-edit-oracle--get case 'address)))
    (when address (org-edit-oracle--goto address))
    (pcase op
      ("set-property"
       (org-set-property (org-edit-oracle--get case 'key)
                         (org-edit-oracle--get case 'value)))
      ("set-todo"
       (org-todo (or (org-edit-oracle--get case 'state) 'none))
       ;; Interactively the state note is stored by `post-command-hook'.
       (when (memq 'org-add-log-note post-command-hook)
         (org-add-log-note)))
      ("add-note"
       (org-add-log-setup 'note)
       (org-add-log-note)
       (insert (org-edit-oracle--get case 'note))
       (org-store-log-note))
      ("add-heading"
       (if address
           (org-insert-heading-respect-content)
         (goto-char (point-max))
         (org-insert-heading nil nil t))
       (org-edit-oracle--heading case))
      ("refile"
       (let* ((file (expand-file-name (or (org-edit-oracle--get case 'target_file)
                                          (buffer-file-name))))
              (target (org-edit-oracle--get case 'target))
              (pos (and target
                        (with-current-buffer (or (find-buffer-visiting file) (find-file-noselect file))
                          (save-excursion (org-edit-oracle--goto target) (point))))))
         (org-refile nil nil (list "target" file nil pos))))
      ("archive" (org-archive-subtree))
      ("capture"
       (let* ((base (current-buffer))
              (body (org-edit-oracle--get case 'body))
              (tags (append (org-edit-oracle--get case 'tags) nil))
              (org-capture-templates
               `(("i" "inbox" entry (file ,(buffer-file-name))
                  ,(concat "* " (org-edit-oracle--get case 'title)
                           (if (string-empty-p body) "" (concat "\n" body)))
                  :immediate-finish t))))
         (org-capture nil "i")
         (set-buffer base)
         (when tags
           ;; As the person would in the capture: C-c C-q on the new heading.
           (goto-char (point-max))
           (outline-previous-heading)
           (org-set-tags tags))))
      (_ (error "Unknown operation %s" op)))))

(let ((cases (let ((json-object-type 'alist) (json-array-type 'vector)
                   (json-key-type 'symbol))
               (json-read-file (car command-line-args-left)))))
  (princ (format "ORG\t%s\n" (org-version)))
  (setq org-id-track-globally nil)
  (cl-loop
   for case across cases do
   (let* ((dir (file-name-as-directory (org-edit-oracle--get case 'dir)))
          (default-directory dir)
          (buffer (find-file-noselect (expand-file-name (org-edit-oracle--get case 'file) dir))))
     (condition-case err
         (progn
           (with-current-buffer buffer
             (org-edit-oracle--run case))
           (save-some-buffers t)
           (princ (format "OK\t%s\n" dir)))
       (error (princ (format "ERR\t%s\t%s\n" dir (error-message-string err)))))
     (dolist (b (buffer-list))
       (when (buffer-file-name b)
         (with-current-buffer b (set-buffer-modified-p nil))
         (kill-buffer b))))))

;;; org_edit_oracle.el ends here
