;;; passepartout-context.el --- Files and buffers sent with every chat turn  -*- lexical-binding: t; -*-

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

;; The context list: files and buffers the person chose, sent with each
;; chat turn and named in the chat buffer's header line.
;; `passepartout-context-add-file', `passepartout-context-add-buffer',
;; `passepartout-context-remove' and `passepartout-context-clear' edit it.
;;
;; Emacs only says what was chosen: a file by its name (the server reads
;; it, through the same path rules as its file tools, so a credential
;; place is refused), a buffer or a part of one by the buffer's whole
;; text and the part's bounds.  The server reads the whole text with
;; org's privacy rules, so a region inside a `@personal' subtree is
;; withheld even when the tag is on a heading above it; it masks secrets
;; and bounds each part.  Elisp filters nothing itself.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)
(require 'passepartout-chat)

(defcustom passepartout-context-text-max 8000000
  "The largest buffer, in characters, whose text goes with a part of it.
The server refuses larger ones; Emacs says so before sending."
  :type 'integer
  :group 'passepartout)

(defvar passepartout-context-items nil
  "The context list: each item is (file . NAME) or (buffer . BUFFER).
Sent with every chat turn; see `passepartout-context-add-file'.")

(defvar passepartout-context-extra nil
  "Parts sent with the next turn only, each a plist as the server reads it.
Bound by `passepartout-send' around the send.")

;;;; The parts as the server reads them

(defun passepartout-context-part (name &optional beg end buffer)
  "Return the plist of the part BEG..END of BUFFER, labelled NAME.
BEG and END default to the whole buffer, BUFFER to the current one.
The plist holds the buffer's whole text and the part's bounds, so the
server can tell which lines lie in private subtrees."
  (with-current-buffer (or buffer (current-buffer))
    (save-restriction
      (widen)
      (when (> (buffer-size) passepartout-context-text-max)
        (user-error "Passepartout: %s is over %d characters, too large to attach"
                    (buffer-name) passepartout-context-text-max))
      (let ((beg (or beg (point-min)))
            (end (or end (point-max))))
        (list :name name
              :file (and buffer-file-name (expand-file-name buffer-file-name))
              :text (buffer-substring-no-properties (point-min) (point-max))
              :start (- beg (point-min))
              :end (- end (point-min)))))))

(defun passepartout-context--item-plist (item)
  "Return the plist sent for ITEM of `passepartout-context-items', or nil."
  (pcase item
    (`(file . ,file) (list :name (file-name-nondirectory file) :file file))
    (`(buffer . ,buffer)
     (when (buffer-live-p buffer)
       (passepartout-context-part (buffer-name buffer) nil nil buffer)))))

(defun passepartout-context-attachments ()
  "Return the parts of the next turn: the one-turn parts, then the list's."
  (append passepartout-context-extra
          (delq nil (mapcar #'passepartout-context--item-plist
                            passepartout-context-items))))

(defun passepartout-context-turn-plist ()
  "Return the context plist entry that carries the attachments, or nil."
  (let ((parts (passepartout-context-attachments)))
    (and parts (list :attachments parts))))

;;;; The list

(defun passepartout-context--label (item)
  "Return the name of ITEM shown to the person."
  (pcase item
    (`(file . ,file) (file-name-nondirectory file))
    (`(buffer . ,buffer) (if (buffer-live-p buffer) (buffer-name buffer) "(killed buffer)"))))

(defun passepartout-context--prune ()
  "Drop killed buffers from the list."
  (setq passepartout-context-items
        (cl-remove-if (lambda (item) (and (eq (car item) 'buffer)
                                          (not (buffer-live-p (cdr item)))))
                      passepartout-context-items)))

(defun passepartout-context--changed ()
  "Drop killed buffers from the list and redisplay the chat buffers' header."
  (passepartout-context--prune)
  (passepartout-context--update-headers)
  (force-mode-line-update t))

;;;###autoload
(defun passepartout-context-add-file (file)
  "Add FILE to the context list, sent with every chat turn.
The server reads it when a turn is sent; private subtrees are withheld."
  (interactive "fAdd file to the Passepartout context: ")
  (let ((file (expand-file-name file)))
    (unless (file-regular-p file)
      (user-error "Passepartout: %s is not a readable file" file))
    (unless (member (cons 'file file) passepartout-context-items)
      (setq passepartout-context-items
            (append passepartout-context-items (list (cons 'file file)))))
    (passepartout-context--changed)
    (message "Passepartout: %s is in the context (%d item%s)"
             (file-name-nondirectory file) (length passepartout-context-items)
             (if (cdr passepartout-context-items) "s" ""))))

;;;###autoload
(defun passepartout-context-add-buffer (buffer)
  "Add BUFFER to the context list, sent with every chat turn.
Its text as it is when a turn is sent goes, private subtrees withheld."
  (interactive (list (get-buffer (read-buffer "Add buffer to the Passepartout context: "
                                              (current-buffer) t))))
  (unless (buffer-live-p buffer)
    (user-error "Passepartout: no such buffer"))
  (when (buffer-local-value 'passepartout-chat-mode buffer)
    (user-error "Passepartout: a chat buffer is the conversation itself"))
  (unless (member (cons 'buffer buffer) passepartout-context-items)
    (setq passepartout-context-items
          (append passepartout-context-items (list (cons 'buffer buffer)))))
  (passepartout-context--changed)
  (message "Passepartout: %s is in the context" (buffer-name buffer)))

;;;###autoload
(defun passepartout-context-remove (label)
  "Remove the item named LABEL from the context list."
  (interactive
   (progn
     (unless passepartout-context-items
       (user-error "Passepartout: the context list is empty"))
     (list (completing-read "Remove from the Passepartout context: "
                            (mapcar #'passepartout-context--label passepartout-context-items)
                            nil t))))
  (setq passepartout-context-items
        (cl-remove label passepartout-context-items
                   :key #'passepartout-context--label :test #'equal :count 1))
  (passepartout-context--changed)
  (message "Passepartout: %s removed from the context" label))

;;;###autoload
(defun passepartout-context-clear ()
  "Empty the context list."
  (interactive)
  (setq passepartout-context-items nil)
  (passepartout-context--changed)
  (message "Passepartout: the context list is empty"))

;;;###autoload
(defun passepartout-context-preview ()
  "Show the context list as the model would receive it with the next turn.
The server reads and filters it as it does for a turn: private subtrees
withheld, secrets masked, each part bounded.  Return the buffer shown."
  (interactive)
  (let ((text (passepartout-call-sync 'attachments-preview
                                      (list (passepartout-context-attachments)))))
    (with-current-buffer (get-buffer-create "*passepartout-attached*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert "# The context list as the next chat turn sends it.\n\n"
                (passepartout-visible (if (stringp text) text (format "%s" text))) "\n")
        (goto-char (point-min))
        (view-mode 1))
      (display-buffer (current-buffer))
      (current-buffer))))

;;;; Shown in the chat buffer

(defun passepartout-context-header ()
  "Return the header line's part naming the context list, or nil."
  (passepartout-context--prune)
  (when passepartout-context-items
    (concat " | context: "
            (mapconcat #'passepartout-context--label passepartout-context-items ", "))))

(defconst passepartout-context--segment '(:eval (passepartout-context-header))
  "The part of a chat buffer's header line that names the context list.")

(defun passepartout-context--chat-header ()
  "Name the context list in this chat buffer's header line while it is not empty.
The chat's own header line is left as it is while the list is empty."
  (let ((wrapped (and (consp header-line-format)
                      (equal (car header-line-format) "")
                      (equal (nth 2 header-line-format) passepartout-context--segment))))
    (cond ((and passepartout-chat-mode passepartout-context-items (not wrapped))
           (setq header-line-format
                 (list "" header-line-format passepartout-context--segment)))
          ((and wrapped (not (and passepartout-chat-mode passepartout-context-items)))
           (setq header-line-format (nth 1 header-line-format))))))

(defun passepartout-context--update-headers ()
  "Show or hide the context list in every chat buffer's header line."
  (dolist (buffer (buffer-list))
    (when (buffer-local-value 'passepartout-chat-mode buffer)
      (with-current-buffer buffer (passepartout-context--chat-header)))))

(add-hook 'passepartout-chat-mode-hook #'passepartout-context--chat-header)
(add-hook 'passepartout-chat-context-functions #'passepartout-context-turn-plist)

(provide 'passepartout-context)
;;; passepartout-context.el ends here
