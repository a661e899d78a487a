;;; passepartout-chat.el --- Chat with Passepartout in an org buffer  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: convenience, outlines
;; Package-Requires: ((emacs "28.1") (org "9.5"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; `M-x passepartout-chat' opens an org-mode buffer with
;; `passepartout-chat-mode' on.  The prompt is the text under the last
;; "* You" heading; `C-c C-c' sends it, a "* Passepartout" heading and a
;; fresh prompt heading appear, and the reply streams in between them at a
;; marker, wherever the person types meanwhile.  `C-c C-k' cancels the turn.
;;
;; Each buffer is one session, its id kept in a #+passepartout_session:
;; line so the conversation can be resumed: `passepartout-chat-resume'
;; completes over the server's sessions (title, last activity, the file a
;; chat was saved in), a chat saved as an org file is a chat again when
;; visited, and an org link [[passepartout:ID]] opens one.  The header
;; line shows the tokens and cost of the last turn, the session and today.  Tool calls and their results
;; are shown in folded :TOOL: drawers; denials and approvals are said in
;; plain lines.  The mode line shows the turn's state: idle, thinking,
;; streaming, waiting for approval or error (see passepartout-turn.el).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)
(require 'passepartout-turn)
(require 'passepartout-approval)
(require 'passepartout-chat-render)
(require 'passepartout-chat-markdown)
(require 'passepartout-models)

(defcustom passepartout-chat-prompt-heading "* You"
  "The heading line under which the person writes a prompt."
  :type 'string
  :group 'passepartout)

(defcustom passepartout-chat-reply-heading "* Passepartout"
  "The heading line above each reply."
  :type 'string
  :group 'passepartout)

(defcustom passepartout-chat-convert-markdown t
  "Non-nil means a reply's Markdown is rewritten as org when its turn ends.
Code fences become source blocks, inline code, bold and links their org
forms; see `passepartout-chat-markdown-to-org'."
  :type 'boolean
  :group 'passepartout)

(defcustom passepartout-chat-turn-end-functions nil
  "Abnormal hook run when a turn ends, in its chat buffer.
Each function receives the `passepartout-turn', whose state says how it
ended: done, cancelled or failed."
  :type 'hook
  :group 'passepartout)

(defcustom passepartout-chat-session-files-file
  (locate-user-emacs-file "passepartout-sessions.eld")
  "The file that remembers which org file each saved chat session is in."
  :type 'file
  :group 'passepartout)

(defcustom passepartout-chat-show-usage t
  "Non-nil means the chat's header line shows tokens and cost.
Those of the last turn, of the session and of today, from the ledger."
  :type 'boolean
  :group 'passepartout)

(defvar passepartout-chat--sessions (make-hash-table :test 'equal)
  "Session id -> its chat buffer.")

(defvar-local passepartout-chat--session nil "This buffer's session id.")
(defvar-local passepartout-chat--turn nil "This buffer's current or last turn.")
(defvar-local passepartout-chat--usage nil
  "The server's last usage plist for this buffer's session: :session, :today.")
(defvar-local passepartout-chat--turn-usage nil
  "The last turn's :tokens and :cost, or nil.")
(defvar-local passepartout-chat--usage-before nil
  "The session's sums when the current turn was sent.")
(defvar-local passepartout-chat--answered nil
  "The local model's last answer here: (MODEL . SECONDS), or nil.")

(defvar-local passepartout-chat-workspace nil
  "The workspace of this chat's turns, or nil for the daemon's default.
Set when the chat is opened, from the buffer it was opened from (see
`passepartout-workspace-of'); shown in the header line.")
(defvar-local passepartout-chat-dropped 0
  "How many server events this buffer dropped as stale (cancelled or old turns).")

;;;; Buffer layout

(defun passepartout-chat--new-id ()
  "Return a fresh id of 16 hexadecimal digits."
  (passepartout--new-id 16))

(defun passepartout-chat--read-session ()
  "Return the session id written in the buffer, or nil."
  (save-excursion
    (goto-char (point-min))
    (when (re-search-forward "^#\\+passepartout_session:[ \t]*\\([^ \t\n]+\\)" nil t)
      (match-string-no-properties 1))))

(defun passepartout-chat--prompt-regexp ()
  "Return the regexp matching the prompt heading line."
  (concat "^" (regexp-quote passepartout-chat-prompt-heading) "[ \t]*$"))

(defun passepartout-chat--prompt-start ()
  "Return the position after the last prompt heading line, or nil."
  (save-excursion
    (goto-char (point-max))
    (when (re-search-backward (passepartout-chat--prompt-regexp) nil t)
      (min (point-max) (1+ (line-end-position))))))

(defun passepartout-chat--ensure-layout ()
  "Give the buffer its session line and a prompt heading at the end."
  (when (= (buffer-size) 0)
    (insert "#+title: Passepartout\n"))
  (unless (passepartout-chat--read-session)
    (save-excursion
      (goto-char (point-min))
      (while (looking-at "^#\\+") (forward-line 1))
      (insert "#+passepartout_session: " (passepartout-chat--new-id) "\n\n")))
  (unless (passepartout-chat--prompt-start)
    (goto-char (point-max))
    (unless (bolp) (insert "\n"))
    (insert passepartout-chat-prompt-heading "\n")))

(defun passepartout-chat--prompt-text ()
  "Return the prompt: the text under the last prompt heading, trimmed."
  (let ((start (passepartout-chat--prompt-start)))
    (string-trim (if start (buffer-substring-no-properties start (point-max)) ""))))

;;;; The mode

(defvar passepartout-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'passepartout-chat-send)
    (define-key map (kbd "C-c C-k") #'passepartout-chat-cancel)
    map)
  "Keymap of `passepartout-chat-mode'.")

(defun passepartout-chat-state (&optional buffer)
  "Return the state of BUFFER's chat: idle, thinking, streaming, waiting or error."
  (with-current-buffer (or buffer (current-buffer))
    (let ((state (passepartout-turn-display-state passepartout-chat--turn)))
      (cond ((and (eq state 'idle) (eq (passepartout-state) 'error)) 'error)
            ((and (eq state 'thinking) (eq (passepartout-state) 'starting)) 'starting)
            (t state)))))

(defun passepartout-chat--mode-line ()
  "Return the mode line text of the chat state."
  (let ((state (passepartout-chat-state)))
    (propertize (format " [%s]" (pcase state
                                  ('waiting "waiting for approval")
                                  ('starting "starting the server")
                                  (_ state)))
                'face (pcase state
                        ('error 'error)
                        ('idle 'shadow)
                        ('waiting 'warning)
                        (_ 'success)))))

;;;###autoload
(define-minor-mode passepartout-chat-mode
  "Chat with Passepartout in this org buffer.
\\<passepartout-chat-mode-map>Write under the last prompt heading and press \
\\[passepartout-chat-send] to send; \\[passepartout-chat-cancel] cancels the turn."
  :lighter " Passepartout"
  :keymap passepartout-chat-mode-map
  (if passepartout-chat-mode
      (progn
        (passepartout-chat--ensure-layout)
        (setq passepartout-chat--session (passepartout-chat--read-session))
        (let ((other (gethash passepartout-chat--session passepartout-chat--sessions)))
          (when (and (buffer-live-p other) (not (eq other (current-buffer))))
            (user-error "Passepartout: session %s is open in %s"
                        passepartout-chat--session (buffer-name other))))
        (puthash passepartout-chat--session (current-buffer) passepartout-chat--sessions)
        (setq mode-line-process '(:eval (passepartout-chat--mode-line)))
        ;; Replies are prose: long lines wrap at words, not at the window's edge.
        (visual-line-mode 1)
        ;; The workspace always; tokens and cost with `passepartout-chat-show-usage'.
        (setq header-line-format '(:eval (passepartout-chat--header-line)))
        (when (and passepartout-chat-show-usage (passepartout-live-p))
          (passepartout-chat-refresh-usage))
        (passepartout-chat--remember-file)
        (add-hook 'after-save-hook #'passepartout-chat--remember-file nil t)
        (add-hook 'kill-buffer-hook #'passepartout-chat--forget nil t))
    (passepartout-chat--forget)
    (visual-line-mode -1)
    (setq mode-line-process nil
          header-line-format nil)
    (remove-hook 'after-save-hook #'passepartout-chat--remember-file t)
    (remove-hook 'kill-buffer-hook #'passepartout-chat--forget t)))

(defun passepartout-chat--forget ()
  "Forget this buffer's session; cancel its live turn."
  (when (passepartout-turn-live-p passepartout-chat--turn)
    (passepartout-chat-cancel))
  (when (and passepartout-chat--session
             (eq (gethash passepartout-chat--session passepartout-chat--sessions)
                 (current-buffer)))
    (remhash passepartout-chat--session passepartout-chat--sessions)))

;;;###autoload
(defun passepartout-chat (&optional new)
  "Open the Passepartout chat buffer, starting the server when needed.
With a prefix argument NEW, open a new buffer for a new session.
Return the buffer."
  (interactive "P")
  (passepartout-start)
  (let ((buffer (if new
                    (generate-new-buffer passepartout-chat-buffer-name)
                  (get-buffer-create passepartout-chat-buffer-name)))
        (from (current-buffer)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'org-mode) (org-mode))
      (unless passepartout-chat-mode (passepartout-chat-mode 1))
      (unless (eq from buffer)  ; the project of the buffer the chat came from
        (setq passepartout-chat-workspace (passepartout-workspace-of from)))
      (goto-char (point-max)))
    (pop-to-buffer-same-window buffer)
    buffer))

;;;###autoload
(defun passepartout-chat-new ()
  "Open a new chat buffer for a new session.  Return the buffer."
  (interactive)
  (passepartout-chat t))

;;;; Sessions: resume, saved files, completion

(defun passepartout-chat--session-files ()
  "Return the alist (SESSION-ID . FILE) of the chats saved in files."
  (let ((file passepartout-chat-session-files-file))
    (when (file-readable-p file)
      (condition-case nil
          (with-temp-buffer
            (insert-file-contents file)
            (let ((data (read (current-buffer))))
              (and (listp data)
                   (cl-remove-if-not (lambda (e) (and (consp e) (stringp (car e))
                                                      (stringp (cdr e))))
                                     data))))
        (error nil)))))

(defun passepartout-chat--remember-file ()
  "Remember the file this chat buffer is saved in, for its session."
  (when (and passepartout-chat--session buffer-file-name)
    (let* ((file (expand-file-name buffer-file-name))
           (files (passepartout-chat--session-files)))
      (unless (equal (cdr (assoc passepartout-chat--session files)) file)
        (setq files (cons (cons passepartout-chat--session file)
                          (cl-remove passepartout-chat--session files
                                     :key #'car :test #'equal)))
        (condition-case err
            (let ((print-length nil) (print-level nil))
              (make-directory (file-name-directory
                               (expand-file-name passepartout-chat-session-files-file))
                              t)
              (with-temp-file passepartout-chat-session-files-file
                (prin1 files (current-buffer))
                (insert "\n")))
          (file-error (message "Passepartout: cannot remember the chat's file: %s"
                               (error-message-string err))))))))

(defun passepartout-chat-session-candidates (sessions)
  "Return completion candidates for SESSIONS, the server's session plists.
Each is a cons (TEXT . ID): TEXT names the title, the last activity and
the file the chat is saved in, if any."
  (let ((files (passepartout-chat--session-files)))
    (mapcar (lambda (session)
              (let* ((id (format "%s" (plist-get session :id)))
                     (title (passepartout-visible
                             (format "%s" (or (plist-get session :title) ""))))
                     (when (format "%s" (or (plist-get session :last-activity) "")))
                     (file (cdr (assoc id files))))
                (cons (format "%s  (%s%s)  [%s]"
                              (if (string-empty-p title) "(no prompt)" title)
                              (replace-regexp-in-string "T" " " when)
                              (if file (concat ", " (abbreviate-file-name file)) "")
                              id)
                      id)))
            sessions)))

(defun passepartout-chat-read-session ()
  "Read a session with completion over the server's sessions; return its id."
  (let ((candidates (passepartout-chat-session-candidates
                     (passepartout-call-sync 'sessions nil))))
    (unless candidates
      (user-error "Passepartout: no session is saved yet"))
    (let ((choice (completing-read "Resume session: "
                                   (lambda (string predicate action)
                                     (if (eq action 'metadata)
                                         '(metadata (display-sort-function . identity))
                                       (complete-with-action action candidates
                                                             string predicate)))
                                   nil t)))
      (or (cdr (assoc choice candidates))
          (user-error "Passepartout: no session %s" choice)))))

(defun passepartout-chat--check-id (session-id)
  "Return SESSION-ID when it is a well-formed session id; else signal."
  (unless (and (stringp session-id)
               (string-match-p "\\`[[:alnum:]_.:-]\\{1,128\\}\\'" session-id))
    (user-error "Passepartout: %S is not a session id" session-id))
  session-id)

;;;###autoload
(defun passepartout-chat-resume (session-id)
  "Open the chat of SESSION-ID and show its history.
Interactively, choose among the server's sessions with completion: each
shows its title (its first prompt), its last activity and the file it
was saved in.  A chat saved in a file reopens that file; otherwise a new
buffer shows the history the server kept.  Return the buffer."
  (interactive (list (passepartout-chat-read-session)))
  (passepartout-chat--check-id session-id)
  (let ((open (gethash session-id passepartout-chat--sessions))
        (file (cdr (assoc session-id (passepartout-chat--session-files)))))
    (cond
     ((buffer-live-p open)
      (pop-to-buffer-same-window open)
      open)
     ((and file (file-readable-p file))
      (find-file file)
      (unless passepartout-chat-mode
        (unless (derived-mode-p 'org-mode) (org-mode))
        (passepartout-chat-mode 1))
      (current-buffer))
     (t (passepartout-chat--resume-from-server session-id)))))

(defun passepartout-chat--resume-from-server (session-id)
  "Open a new chat buffer for SESSION-ID with the history the server kept."
  (let ((buffer (generate-new-buffer passepartout-chat-buffer-name)))
    (with-current-buffer buffer
      (org-mode)
      (insert "#+title: Passepartout\n#+passepartout_session: " session-id "\n\n")
      (passepartout-chat-mode 1)
      (passepartout-call 'session-history (list session-id)
                         (lambda (history)
                           (when (buffer-live-p buffer)
                             (with-current-buffer buffer
                               (passepartout-chat--insert-history history))))))
    (pop-to-buffer-same-window buffer)
    buffer))

;;;###autoload
(defun passepartout-chat-resume-file-maybe ()
  "Make a visited org file with a saved chat in it a chat again.
For `org-mode-hook': a file with a #+passepartout_session: line near
its top gets `passepartout-chat-mode', without marking it modified."
  (when (and buffer-file-name
             (not (bound-and-true-p passepartout-chat-mode))
             (save-excursion
               (goto-char (point-min))
               (re-search-forward "^#\\+passepartout_session:[ \t]*[^ \t\n]"
                                  (min (point-max) 4096) t)))
    (let ((modified (buffer-modified-p)))
      (condition-case err
          (passepartout-chat-mode 1)
        (user-error (message "%s" (error-message-string err))))
      (unless modified (set-buffer-modified-p nil)))))

(defconst passepartout-chat--refused-results '("refused by policy" "not run:")
  "How a kept tool result of a call that was refused or not run begins.")

(defun passepartout-chat--history-turn (pos)
  "Return a finished turn whose reply grows at POS, to render a kept one."
  (passepartout-turn--make :id "history" :session passepartout-chat--session
                           :state 'done :start (copy-marker pos) :end (copy-marker pos t)))

(defun passepartout-chat--history-reply (turn)
  "Open the reply heading of TURN, a kept turn, unless it is open already.
Return TURN, or a new one when it was nil."
  (or turn
      (progn
        (insert passepartout-chat-reply-heading "\n")
        (passepartout-chat--history-turn (point)))))

(defun passepartout-chat--history-args (raw)
  "Return RAW, a kept call's arguments (JSON text), as the live chat had them.
A JSON object becomes the plist the server sends with a call; anything
else stays the text it is."
  (or (and (stringp raw) (fboundp 'json-parse-string)
           (condition-case nil
               (let ((value (json-parse-string raw :object-type 'plist :array-type 'list
                                               :null-object nil :false-object nil)))
                 (and (consp value) value))
             (error nil)))
      raw))

(defun passepartout-chat--history-tool (turn entry calls)
  "Show ENTRY, a kept tool result, in TURN.
CALLS is the alist of call ids to the calls kept before.  A result whose
call was refused is the denial line the chat showed, else the result goes
into the call's drawer."
  (let* ((id (plist-get entry :call-id))
         (call (cdr (assoc id calls)))
         (name (or (plist-get call :name) "tool"))
         (output (or (plist-get entry :content) "")))
    (if (cl-some (lambda (prefix) (string-prefix-p prefix output))
                 passepartout-chat--refused-results)
        (passepartout-chat-render-tool
         turn (if (stringp (plist-get entry :described))
                  ;; The refusal as it was said live: the call, and the gates' reasons.
                  (list :event "denied" :name (plist-get entry :described)
                        :reason (plist-get entry :why))
                (list :event "denied" :name name :args (plist-get call :arguments)
                      :reason output)))
      (unless (assoc id (passepartout-turn-tools turn))
        (passepartout-chat-render-tool
         turn (list :event "tool" :name name :call-id id
                    :args (passepartout-chat--history-args (plist-get call :arguments)))))
      (passepartout-chat-render-tool
       turn (list :event "tool-result" :name name :call-id id
                  :ok (not (or (equal output "error") (string-prefix-p "error: " output)))
                  :output output)))))

(defun passepartout-chat--insert-history (history)
  "Insert HISTORY before the prompt: plists with :role and :content (or :text).
Each kept turn comes back as it was shown: the person's prompt, then one
reply heading with the reply's text, each answer to an approval as its
line, each tool call in its folded drawer with its result, a refused
call as its denial line, and an error as the error line."
  (save-excursion
    (goto-char (or (passepartout-chat--prompt-start) (point-max)))
    (forward-line -1)
    (let ((turn nil) (calls nil))
      (dolist (entry history)
        (let ((role (passepartout--name (plist-get entry :role)))
              (text (or (plist-get entry :content) (plist-get entry :text))))
          (pcase role
            ("user"
             (when (stringp text)
               (when turn (goto-char (passepartout-turn-end turn)))
               (setq turn nil)
               (unless (bolp) (insert "\n"))
               (insert passepartout-chat-prompt-heading
                       "\n" (passepartout-chat-render-reply (string-trim-right text)) "\n")))
            ("assistant"
             (let ((tool-calls (plist-get entry :tool-calls)))
               (when (or (and (stringp text) (not (string-empty-p (string-trim text))))
                         tool-calls)
                 (setq turn (passepartout-chat--history-reply turn))
                 (when (and (stringp text) (not (string-empty-p (string-trim text))))
                   (passepartout-chat-render-text turn (string-trim-right text))
                   (passepartout-chat-render--fresh-line turn))
                 (dolist (call tool-calls)
                   (push (cons (plist-get call :call-id) call) calls)))))
            ("tool"
             (when (and turn (assoc (plist-get entry :call-id) calls))
               (passepartout-chat--history-tool turn entry calls)))
            ("denied"
             (setq turn (passepartout-chat--history-reply turn))
             (passepartout-chat-render-tool
              turn (list :event "denied" :name (or (plist-get entry :name) "")
                         :reason (if (stringp text) text "refused"))))
            ("approval"
             (setq turn (passepartout-chat--history-reply turn))
             (let ((approved (equal (plist-get entry :answer) "allowed"))
                   (reason (plist-get entry :reason)))
               (passepartout-chat--approval-note
                turn (if (stringp text) text "")
                approved (cond ((and approved (plist-get entry :always)) "always")
                               ((and (stringp reason) (not (string-empty-p reason)))
                                reason))
                (plist-get entry :by))))
            ("error"
             (setq turn (passepartout-chat--history-reply turn))
             (passepartout-chat-render-note
              turn (format "*Error:* %s" (if (stringp text) text "failed"))))))
        (when turn (goto-char (passepartout-turn-end turn))))
      (when turn
        (goto-char (passepartout-turn-end turn))
        (unless (bolp) (insert "\n"))))))

;;;; Tokens and cost in the header line

(defun passepartout-chat--workspace-text ()
  "Return the workspace part of the header line."
  (format " In %s |" (if passepartout-chat-workspace
                         (abbreviate-file-name passepartout-chat-workspace)
                       "the daemon's default workspace")))

(defun passepartout-chat--header-line ()
  "Return the header line: the workspace, tokens and cost, and who answered.
Tokens and cost of the turn, the session and today; the local model's
last answer, when it was the one that answered."
  (concat (passepartout-chat--workspace-text)
          (cond ((not passepartout-chat-show-usage) "")
                (passepartout-chat--usage
                 (concat " " (passepartout-usage-text passepartout-chat--usage
                                                      passepartout-chat--turn-usage)))
                (t " Passepartout: no cost booked yet"))
          (if passepartout-chat--answered
              (propertize (concat "  — answered by the"
                                  (passepartout-chat--answered-text
                                   passepartout-chat--answered))
                          'face 'warning)
            "")))

(defun passepartout-chat--minus (after before key)
  "Return KEY of the sums AFTER less those of BEFORE."
  (- (or (plist-get after key) 0) (or (plist-get before key) 0)))

(defun passepartout-chat-refresh-usage (&optional turn-ended)
  "Ask the server for this session's and today's usage; show it.
With TURN-ENDED, the difference from when the turn was sent is the turn's."
  (let ((buffer (current-buffer)))
    (passepartout-call
     'usage (list passepartout-chat--session)
     (lambda (usage)
       (when (buffer-live-p buffer)
         (with-current-buffer buffer
           (when (and turn-ended passepartout-chat--usage-before)
             (let ((after (plist-get usage :session))
                   (before passepartout-chat--usage-before))
               (setq passepartout-chat--turn-usage
                     (list :cost (passepartout-chat--minus after before :cost)
                           :tokens-in (passepartout-chat--minus after before :tokens-in)
                           :tokens-out (passepartout-chat--minus after before :tokens-out))
                     passepartout-chat--usage-before nil)))
           (setq passepartout-chat--usage usage)
           (force-mode-line-update))))
     (lambda (err) (passepartout--log "usage failed: %s"
                                      (passepartout-epc-format-error err))))))

(defun passepartout-chat--note-usage-before ()
  "Record the session's sums as the turn is sent."
  (setq passepartout-chat--usage-before
        (or (plist-get passepartout-chat--usage :session) (list :cost 0)))
  (let ((buffer (current-buffer)))
    (passepartout-call 'usage (list passepartout-chat--session)
                       (lambda (usage)
                         (when (buffer-live-p buffer)
                           (with-current-buffer buffer
                             (setq passepartout-chat--usage usage)
                             (when passepartout-chat--usage-before
                               (setq passepartout-chat--usage-before
                                     (or (plist-get usage :session)
                                         (list :cost 0))))))))))

;;;; Sending and cancelling

(defun passepartout-chat--open-turn (text)
  "Lay out a new turn for TEXT in the buffer and return it."
  (goto-char (point-max))
  (unless (bolp) (insert "\n"))
  (insert passepartout-chat-reply-heading "\n")
  (let ((pos (point)))
    (insert "\n" passepartout-chat-prompt-heading "\n")
    (let ((turn (passepartout-turn--make
                 :id (passepartout--new-id 12)
                 :session passepartout-chat--session
                 :prompt text
                 :start (copy-marker pos)
                 :end (copy-marker pos t)
                 :sent (float-time))))
      (setq passepartout-chat--turn turn)
      (force-mode-line-update)
      turn)))

(defvar passepartout-chat-context-functions nil
  "Functions of no argument whose plists are added to each turn's context.")

(defvar passepartout-chat-turn-choice nil
  "Model, tier and preset fields chosen where a sent text came from, or nil.
Bound by `passepartout-send' around the send: the org subtree a text is
sent from chooses the model of its reply in the chat, as it does for a
reply in place.  Its fields win over the chat buffer's own.")

(defun passepartout-chat--choice ()
  "Return the model fields of a turn: `passepartout-chat-turn-choice' first."
  (let ((own (passepartout-models-turn-context))
        (chosen (copy-sequence passepartout-chat-turn-choice)))
    (cl-loop for (key value) on own by #'cddr
             unless (plist-member chosen key)
             do (setq chosen (append chosen (list key value))))
    chosen))

(defun passepartout-chat--context ()
  "Return the context plist sent with a prompt."
  (append (passepartout-chat--choice)
          (list :buffer (buffer-name))
          (and passepartout-chat-workspace (list :workspace passepartout-chat-workspace))
          (apply #'append (mapcar #'funcall passepartout-chat-context-functions))))

(defun passepartout-chat-send ()
  "Send the prompt under the last prompt heading.
A turn still running is cancelled first."
  (interactive)
  (unless passepartout-chat-mode
    (user-error "Passepartout: not a chat buffer"))
  (let ((text (passepartout-chat--prompt-text)))
    (when (string-empty-p text)
      (user-error "Passepartout: write the prompt under the last \"%s\" heading"
                  passepartout-chat-prompt-heading))
    (when (passepartout-turn-live-p passepartout-chat--turn)
      (passepartout-chat-cancel))
    (when passepartout-chat-show-usage
      (passepartout-chat--note-usage-before))
    (let ((turn (passepartout-chat--open-turn text))
          (buffer (current-buffer)))
      (goto-char (point-max))
      (passepartout-call 'chat-send
                         (list passepartout-chat--session (passepartout-turn-id turn)
                               text (passepartout-chat--context))
                         nil
                         (lambda (err)
                           (passepartout-chat--end-with-error
                            buffer turn 'fail (passepartout-epc-format-error err))))
      turn)))

(defun passepartout-chat-cancel ()
  "Cancel the turn that is running in this chat buffer."
  (interactive)
  (let ((turn passepartout-chat--turn))
    (if (not (passepartout-turn-live-p turn))
        (when (called-interactively-p 'interactive)
          (message "Passepartout: no turn to cancel"))
      (passepartout-turn-advance turn 'cancel)
      (passepartout-chat-render-note turn "/Cancelled./")
      (when (passepartout-live-p)
        (passepartout-call 'chat-cancel (list (passepartout-turn-session turn)
                                              (passepartout-turn-id turn))))
      (passepartout-chat--turn-ended turn))))

(defun passepartout-chat--turn-ended (turn)
  "Refresh the mode line and run the hook for TURN, which ended."
  (force-mode-line-update)
  (when (and passepartout-chat-show-usage (passepartout-live-p))
    (passepartout-chat-refresh-usage t))
  (run-hook-with-args 'passepartout-chat-turn-end-functions turn))

(defun passepartout-chat--end-with-error (buffer turn event text)
  "Show TEXT in BUFFER when TURN accepts EVENT (error or fail)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (and (eq turn passepartout-chat--turn)
                 (passepartout-turn-advance turn event))
        (setf (passepartout-turn-error turn) text)
        (passepartout-chat-render-note turn (format "*Error:* %s" text))
        (if (passepartout-turn-live-p turn)
            (force-mode-line-update)
          (passepartout-chat--turn-ended turn))))))

;;;; Callbacks from the server

(defmacro passepartout-chat--with-turn (session turn-id event &rest body)
  "Run BODY in SESSION's buffer with `turn' bound, when TURN-ID accepts EVENT.
Count the event as dropped when the turn is stale or refuses it."
  (declare (indent 3) (debug t))
  (let ((buffer (make-symbol "buffer")))
    `(let ((,buffer (gethash ,session passepartout-chat--sessions)))
       (when (buffer-live-p ,buffer)
         (with-current-buffer ,buffer
           (let ((turn passepartout-chat--turn))
             (if (and turn (equal (passepartout-turn-id turn) ,turn-id)
                      (passepartout-turn-advance turn ,event))
                 (progn ,@body)
               (cl-incf passepartout-chat-dropped))))))))

(defun passepartout--on-chunk (session turn-id text)
  "Insert TEXT, a piece of the reply of SESSION's turn TURN-ID."
  (passepartout-chat--with-turn session turn-id 'chunk
    (when (stringp text)
      (unless (passepartout-turn-first turn)
        (setf (passepartout-turn-first turn) (float-time))
        (force-mode-line-update))
      (passepartout-chat-render-text turn text))))

(defun passepartout--on-done (session turn-id info)
  "End SESSION's turn TURN-ID; INFO may say it was cancelled."
  (passepartout-chat--with-turn session turn-id
      (if (plist-get info :cancelled) 'cancel 'done)
    (when passepartout-chat-convert-markdown
      (passepartout-chat-markdown-to-org (passepartout-turn-start turn)
                                         (passepartout-turn-end turn))
      ;; A Markdown link became an org link: it may be one that runs code.
      (passepartout-inert-region (passepartout-turn-start turn)
                                 (passepartout-turn-end turn)))
    (passepartout-chat--note-model turn info)
    (passepartout-chat--turn-ended turn)))

(defun passepartout-chat--note-model (turn info)
  "Say on TURN's heading and in the header line that the local model answered.
INFO is the turn's end: its :model, and :local when that model is the
small one run by the server itself, whose answers read differently."
  (let ((model (plist-get info :model)))
    (setq passepartout-chat--answered
          (and (plist-get info :local) (stringp model)
               (cons model (- (or (passepartout-turn-finished turn) (float-time))
                              (or (passepartout-turn-sent turn) (float-time))))))
    (when passepartout-chat--answered
      (save-excursion
        (goto-char (passepartout-turn-start turn))
        (forward-line -1)
        (when (looking-at (concat (regexp-quote passepartout-chat-reply-heading) "[ \t]*$"))
          (goto-char (match-end 0))
          (insert (passepartout-chat--answered-text passepartout-chat--answered)))))
    (force-mode-line-update)))

(defun passepartout-chat--answered-text (answered)
  "Return the words for ANSWERED, (MODEL . SECONDS) of the local model."
  (format " (local model %s, %.1f s)"
          (passepartout-visible (car answered)) (cdr answered)))

(defun passepartout--on-error (session turn-id kind message)
  "Show the error KIND with MESSAGE in SESSION's turn TURN-ID."
  (let ((buffer (gethash session passepartout-chat--sessions)))
    (if (not (buffer-live-p buffer))
        (passepartout--log "error for %s/%s: %s: %s" session turn-id kind message)
      (with-current-buffer buffer
        (let ((turn passepartout-chat--turn))
          (if (and turn (equal (passepartout-turn-id turn) turn-id))
              (passepartout-chat--end-with-error
               buffer turn 'error (format "%s: %s" kind message))
            (cl-incf passepartout-chat-dropped)))))))

(defun passepartout--on-tool (session turn-id info)
  "Show the tool event INFO of SESSION's turn TURN-ID."
  (passepartout-chat--with-turn session turn-id 'tool
    (force-mode-line-update)
    (passepartout-chat-render-tool turn info)))

;;;; Approvals and a server that goes away

(defun passepartout-chat--approval-asked (_id session turn-id _description _info)
  "Show that SESSION's turn TURN-ID waits for an approval."
  (passepartout-chat--with-turn session turn-id 'approval
    (force-mode-line-update)))

(defconst passepartout-chat--approval-note-width 200
  "The characters of an action said in the chat once it was answered.
The whole action was shown when it was asked; a proposed skill's would
fill the chat.")

(defun passepartout-chat--approval-answered (_id session turn-id description approved reason)
  "Say in SESSION's turn TURN-ID whether DESCRIPTION was APPROVED, and REASON."
  (passepartout-chat--with-turn session turn-id 'answered
    (force-mode-line-update)
    (passepartout-chat--approval-note turn description approved reason nil)))

(defun passepartout-chat--approval-note (turn description approved reason by)
  "Say in TURN whether DESCRIPTION was APPROVED, and REASON.
REASON is why a no, or \"always\" for a yes kept as a grant.  BY is the
face that answered when it was another than Emacs (a resumed chat
says so), else nil."
  (unless approved
    (push description (passepartout-turn-refused turn)))
  (let ((shown (truncate-string-to-width
                description passepartout-chat--approval-note-width nil nil "…"))
        (where (if (and (stringp by) (not (member by '("" "emacs"))))
                   (format " [answered in %s]" (passepartout-visible by))
                 "")))
    (passepartout-chat-render-note
     turn (if approved
              (format "Approved%s: %s%s" (if (equal reason "always") " always" "")
                      shown where)
            (format "*Not approved:* %s (%s)%s" shown (or reason "refused") where)))))

(defun passepartout-chat--server-exited (what)
  "End the live turn of each chat buffer: the server went away, see WHAT."
  (maphash (lambda (_session buffer)
             (when (buffer-live-p buffer)
               (let ((turn (buffer-local-value 'passepartout-chat--turn buffer)))
                 (when (passepartout-turn-live-p turn)
                   (passepartout-chat--end-with-error buffer turn 'fail what)))))
           passepartout-chat--sessions))

(defun passepartout-chat--refresh-all-usage ()
  "Show the usage in the header line of every chat buffer."
  (when passepartout-chat-show-usage
    (maphash (lambda (_session buffer)
               (when (buffer-live-p buffer)
                 (with-current-buffer buffer (passepartout-chat-refresh-usage))))
             passepartout-chat--sessions)))

(add-hook 'passepartout-ready-hook #'passepartout-chat--refresh-all-usage)
(add-hook 'passepartout-approval-request-functions #'passepartout-chat--approval-asked)
(add-hook 'passepartout-approval-answer-functions #'passepartout-chat--approval-answered)
(add-hook 'passepartout-server-exit-functions #'passepartout-chat--server-exited)

(provide 'passepartout-chat)
;;; passepartout-chat.el ends here
