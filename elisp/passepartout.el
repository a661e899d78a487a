;;; passepartout.el --- A personal agent that lives in your org files  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (org "9.5"))
;; Keywords: convenience, outlines, processes
;; URL: https://github.com/passepartout-agent/passepartout

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Passepartout is a personal agent: a Python daemon runs the agent loop,
;; whether Emacs is open or not, and Emacs is one of its faces.  This is the package's entry: its user options, the
;; notifications the server sends, and the commands.
;;
;;   M-x passepartout-menu      every command, in a transient menu
;;   M-x passepartout-chat      chat in an org buffer (passepartout-chat.el)
;;   M-x passepartout-chat-resume  reopen a past session, with completion
;;   M-x passepartout-start     attach to the daemon (started when none runs);
;;                              also -stop (detach; C-u: stop it) and -restart
;;   M-x passepartout-status    the server's state, model, provider and health
;;   M-x passepartout-cost      tokens and cost of the chat's session and of today
;;   M-x passepartout-approvals the approvals file, where Flight Plans wait
;;   M-x passepartout-notices   the daemon's notices (the mode line counts new ones)
;;   M-x passepartout-show-log  the server's stderr
;;
;; An org link [[passepartout:SESSION-ID]] opens that chat session.
;;
;; The server process lives in passepartout-server.el, approvals in
;; passepartout-approval.el, the wire protocol in passepartout-epc.el,
;; org automation and focus in passepartout-org.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'ol)
(require 'passepartout-server)

(defcustom passepartout-model nil
  "The model the chat asks for, as a litellm model name, or nil.
When nil, the server uses its configured default (PASSEPARTOUT_MODEL)."
  :type '(choice (const :tag "Server default" nil) string)
  :group 'passepartout)

(defcustom passepartout-approval-function #'passepartout-approval-ask-minibuffer
  "The function that asks the person whether an action may run.
It is called with DESCRIPTION, a string naming the exact action, and
INFO, a plist from the server (:kind, :code, :name, :args...).  The
return value t approves the action once, `always' approves it and keeps
the yes as a standing grant scoped to that action, `never' denies it and
keeps the no; anything else denies it once.  (Code to evaluate in Emacs
is approved once at most.)  It is called with dialogs off, so
`yes-or-no-p' asks in the minibuffer."
  :type 'function
  :group 'passepartout)

(defcustom passepartout-chat-buffer-name "*passepartout*"
  "The name of the chat buffer `passepartout-chat' opens."
  :type 'string
  :group 'passepartout)

;;;; Text shown to the person

(defun passepartout-visible (text)
  "Return TEXT with the characters that hide or reorder it shown as \\uNNNN.
Bidi controls (U+202A-U+202E, U+2066-U+2069 and the marks) make Emacs
display text in another order than Lisp reads it, and other format
characters (zero-width spaces and joiners, the byte order mark) are
invisible; the line and paragraph separators are no line ends for Lisp.
What the person reads (a question, a reply) is what Lisp holds."
  (if (not (string-match-p "[^[:ascii:]]" text))
      text
    (mapconcat (lambda (char)
                 (if (memq (get-char-code-property char 'general-category) '(Cf Zl Zp))
                     (format "\\u%04x" char)
                   (string char)))
               text "")))

(defconst passepartout--safe-link-types
  '("http" "https" "ftp" "mailto" "file" "id" "doi" "news" "attachment"
    "info" "help" "man" "passepartout")
  "Bracket link types that only open something: a page, a file, a heading.
Any other type, or a bare word, may be a link abbreviation (a #+LINK: line,
`org-link-abbrev-alist') that expands into an `elisp:' or `shell:' link.")

(defconst passepartout--active-text
  (concat
   "%\\(?1:\\)%[ \t]*("                 ; a sexp the agenda evaluates: <%%(...)>
   "\\|\\(?:elisp\\|shell\\)\\(?1:\\):"  ; links that run code
   "\\|\\[\\[\\(?1:\\)\\(?2:[^][:space:]:\\\"*#(./~\u200b][^][:space:]:\\\"\u200b]*\\)[]:]"
   "\\|src\\(?1:\\)_[^][:space:][{]+[[{]"      ; inline source block: src_sh{ls}
   "\\|call\\(?1:\\)_[^][:space:][(]+[[(]"     ; inline babel call: call_name()
   "\\|{\\(?1:\\){{"                    ; a macro, code with #+MACRO: (eval ...)
   "\\|-\\*\\(?1:\\)-"                  ; a -*- ... -*- line of file variables
   "\\|Local\\(?1:\\)[ \t]+Variables:")  ; a Local Variables: list
  "Where text would make org or Emacs act: group 1 is where it breaks.
The same constructs as the server's `org_escape' makes inert: an agenda sexp
anywhere in a line (org-agenda evaluates it when the agenda is shown), inline
source blocks and babel calls, `elisp:' and `shell:' links (they run code when
clicked, at once for a person who turned org's confirmation off), a bracket
link whose type could be an abbreviation of one (group 2, see
`passepartout--safe-link-types'), macros, and file-local variables (a -*-
line, a \"Local Variables:\" list), which set variables, `eval' among them,
when a saved file is visited again.")

(defun passepartout-inert (text)
  "Return TEXT with a zero-width space where it would make org or Emacs act.
See `passepartout--active-text'.  The zero-width space is org's own escape:
the text reads the same and does nothing."
  (with-temp-buffer
    (insert text)
    (passepartout-inert-region (point-min) (point-max))
    (buffer-string)))

(defun passepartout-inert-region (start end)
  "Make the text between START and END inert in place, as `passepartout-inert'."
  (save-excursion
    (let ((case-fold-search t)
          (end (copy-marker end)))
      (goto-char start)
      (while (re-search-forward passepartout--active-text end t)
        (goto-char (match-beginning 1))
        (unless (and (match-beginning 2)
                     (eq (char-after (match-end 2)) ?:)
                     (member (downcase (match-string 2)) passepartout--safe-link-types))
          (insert "\u200b")))
      (set-marker end nil))))

;;;; Notifications from the server

(defvar passepartout--last-status nil "The last status plist the server pushed.")

(defun passepartout--name (value)
  "Return VALUE, a symbol, keyword or string from the server, as a string.
A keyword loses its colon; nil is the empty string."
  (string-remove-prefix ":" (if (stringp value) value (format "%s" (or value "")))))

(defun passepartout--on-notify (level text)
  "Show TEXT, a notification of LEVEL (info, warning or error) from the server.
A notification about a Flight Plan says how to open the approvals file,
and every unmodified buffer visiting that file is reverted."
  (let ((text (if (stringp text) text (format "%S" text))))
    (when (string-match-p "Flight Plan\\|approvals\\.org" text)
      (passepartout--revert-approvals)
      (unless (string-match-p "passepartout-approvals" text)
        (setq text (concat text "  (M-x passepartout-approvals opens it)"))))
    (passepartout--log "notify %s: %s" level text)
    (passepartout-notices-add level text)
    (if (member (format "%s" level) '("warning" "error" ":warning" ":error"))
        (display-warning 'passepartout text
                         (if (string-suffix-p "error" (format "%s" level)) :error :warning))
      (message "Passepartout: %s" text))))

(defun passepartout--on-status (plist)
  "Record PLIST, a status the server pushed or answered."
  (setq passepartout--last-status plist)
  (passepartout--announce-ready plist)
  (force-mode-line-update t))

(declare-function passepartout-notices-unseen "passepartout-notices")

(defun passepartout-status-text (state status)
  "Return a one-line summary of the server's STATE and its STATUS plist."
  (let ((problems (plist-get status :problems))
        (sessions (plist-get status :sessions))
        (approvals (plist-get status :pending-approvals))
        (model (plist-get status :model)))
    (concat (format "Passepartout: %s" state)
            (if (plist-get status :health) (format ", %s" (plist-get status :health)) "")
            (cond ((stringp model)
                   (format ", model %s (%s)" model (or (plist-get status :provider) "?")))
                  (status ", no model configured")
                  (t ""))
            (if (consp sessions) (format ", %d session(s)" (length sessions)) "")
            (if (and (numberp approvals) (> approvals 0))
                (format ", %d approval(s) waiting" approvals)
              "")
            (if problems
                (concat "; problems: "
                        (mapconcat (lambda (p) (format "%s" p)) problems "; "))
              "")
            (let ((unseen (if (fboundp 'passepartout-notices-unseen)
                              (passepartout-notices-unseen)
                            0)))
              (if (> unseen 0)
                  (format "; %d notice%s not seen (M-x passepartout-notices)"
                          unseen (if (= unseen 1) "" "s"))
                "")))))

(defun passepartout-status ()
  "Show the server's state and health in the echo area."
  (interactive)
  (if (passepartout-live-p)
      (passepartout-call 'status nil
                         (lambda (status)
                           (setq passepartout--last-status status)
                           (message "%s" (passepartout-status-text
                                          passepartout--state status))))
    (message "%s" (passepartout-status-text passepartout--state nil))))

;;;; Calls that wait

(defun passepartout-call-sync (method args &optional timeout)
  "Call the server's METHOD with ARGS and return its value.
Start the server when needed and wait at most TIMEOUT seconds (by
default the start timeout and ten more).  An error answer or no answer
is a `user-error' that names METHOD."
  (let (done value failure)
    (passepartout-call method args
                       (lambda (answer) (setq value answer done t))
                       (lambda (err) (setq failure err done t)))
    (let ((deadline (+ (float-time) (or timeout (+ passepartout-start-timeout 10)))))
      (while (and (not done) (< (float-time) deadline))
        (accept-process-output nil 0.05)))
    (cond (failure (user-error "Passepartout: %s failed: %s" method
                               (passepartout-epc-format-error failure)))
          ((not done) (user-error "Passepartout: no answer to %s in time" method))
          (t value))))

;;;; Starting, announced

(defvar passepartout--progress-timer nil
  "The timer that shows how long the server has been starting.")

(defvar passepartout--starting-since nil
  "When the server began to start, or nil.")

(defvar passepartout--starting-message nil
  "The message that announced the start, to tell it apart from later ones.")

(defvar passepartout--announced-timer nil
  "The timer that shows the ready line again over the start's message.")

(defun passepartout--stop-progress ()
  "Stop showing the start's progress."
  (when (timerp passepartout--progress-timer)
    (cancel-timer passepartout--progress-timer))
  (setq passepartout--progress-timer nil))

(defun passepartout--announce-state (state)
  "Say what STATE, the server's new state, means for the person."
  (pcase state
    ('starting
     (passepartout--stop-progress)
     (setq passepartout--starting-since (float-time))
     (setq passepartout--starting-message
           (message "Passepartout: %s..." (passepartout--starting-text)))
     (setq passepartout--progress-timer
           (run-at-time 1 1 #'passepartout--show-progress)))
    ('ready
     (when passepartout--starting-since
       (passepartout-call 'status nil #'passepartout--on-status)))
    (_ (passepartout--stop-progress)
       (setq passepartout--starting-since nil))))

(defun passepartout--starting-text ()
  "Return what a start is doing, in a few words."
  (cond (passepartout--helper "starting the daemon")
        ((passepartout-persistent-p) "attaching to the daemon")
        (t "starting the server")))

(defun passepartout--show-progress ()
  "Show for how long the server has been starting, while it is.
The handshake comes first, then the agent boots (skills, models)."
  (if (and passepartout--starting-since (memq passepartout--state '(starting ready)))
      (unless (active-minibuffer-window)
        (message "Passepartout: %s... %d s"
                 (if (eq passepartout--state 'starting) (passepartout--starting-text)
                   "the server is up, the agent is booting")
                 (round (- (float-time) passepartout--starting-since))))
    (passepartout--stop-progress)))

(defun passepartout--announce-ready (status)
  "Say the server is ready, with its STATUS, when a start was announced."
  (when (and passepartout--starting-since (plist-get status :ready))
    (let ((seconds (- (float-time) passepartout--starting-since)))
      (setq passepartout--starting-since nil)
      (passepartout--stop-progress)
      (passepartout--keep-announced
       (message "%s (started in %.1f s)" (passepartout-status-text 'ready status)
                seconds)))))

(defun passepartout--keep-announced (text)
  "Show TEXT again when the start's message is back in the echo area.
\\[execute-extended-command] shows its key hint with `with-temp-message',
which puts back the message it covered, the start's, once the hint
has been shown: a ready announced meanwhile would be lost to it."
  (let ((starting passepartout--starting-message)
        (checks 12))
    (when (timerp passepartout--announced-timer)
      (cancel-timer passepartout--announced-timer))
    (when starting
      (setq passepartout--announced-timer
            (run-at-time
             0.5 0.5
             (lambda ()
               (setq checks (1- checks))
               (let ((shown (current-message)))
                 (when (and shown (string-prefix-p starting shown))
                   (message "%s" text)
                   (setq checks 0)))
               (when (<= checks 0)
                 (cancel-timer passepartout--announced-timer)
                 (setq passepartout--announced-timer nil))))))))

(defun passepartout--watch-state (_symbol state operation _where)
  "Announce STATE once it is the value of `passepartout--state'.
Only an OPERATION that sets the variable is announced, not a binding."
  (when (eq operation 'set)
    (run-at-time 0 nil (lambda ()
                         (when (eq passepartout--state state)
                           (passepartout--announce-state state))))))

(add-variable-watcher 'passepartout--state #'passepartout--watch-state)

;;;; Approvals and cost

(defvar passepartout-chat--session)  ; passepartout-chat.el, buffer-local

(defun passepartout--approvals-file ()
  "Return the approvals file the server named, or nil."
  (let ((file (plist-get passepartout--last-status :approvals-file)))
    (and (stringp file) (not (string-empty-p file)) file)))

(defun passepartout--revert-approvals ()
  "Revert each unmodified buffer that visits the approvals file."
  (let ((file (passepartout--approvals-file)))
    (dolist (buffer (buffer-list))
      (let ((visited (buffer-file-name buffer)))
        (when (and visited
                   (if file (file-equal-p visited file)
                     (equal (file-name-nondirectory visited) "approvals.org"))
                   (not (buffer-modified-p buffer)))
          (with-current-buffer buffer
            (ignore-errors (revert-buffer t t t))))))))

;;;###autoload
(defun passepartout-approvals ()
  "Open the approvals file, where Flight Plans wait for an answer.
The buffer follows the file as the server changes it (`auto-revert-mode')."
  (interactive)
  (let* ((status (passepartout-call-sync 'status nil))
         (file (plist-get status :approvals-file)))
    (setq passepartout--last-status status)
    (unless (stringp file)
      (user-error "Passepartout: the server did not name its approvals file"))
    (unless (file-exists-p file)
      (message "Passepartout: no Flight Plan has been written yet (%s)" file))
    (find-file file)
    (unless (derived-mode-p 'org-mode) (org-mode))
    (passepartout-approvals-mode 1)
    (auto-revert-mode 1)
    (current-buffer)))

(defun passepartout--approvals-buffer-p ()
  "Return non-nil when the current buffer visits the approvals file.
That is the file the server named, or a file the server wrote (its title line)."
  (let ((file (passepartout--approvals-file)))
    (and buffer-file-name
         (or (and file (file-equal-p buffer-file-name file))
             (save-excursion
               (goto-char (point-min))
               (looking-at-p "#\\+TITLE: Passepartout approvals$"))))))

(defun passepartout--visit-approvals ()
  "Turn `passepartout-approvals-mode' on in a visited approvals file."
  (when (passepartout--approvals-buffer-p)
    (passepartout-approvals-mode 1)))

;; The approvals file cycles to APPROVED and REJECTED however it was opened.
(add-hook 'org-mode-hook #'passepartout--visit-approvals)

(defun passepartout-usage-text (usage &optional turn)
  "Return USAGE, the server's plist of :session and :today sums, as one line.
TURN, when non-nil, is a plist of the last turn's :tokens and :cost."
  (let ((part (lambda (name sums)
                (when sums
                  (format "%s $%.4f, %d tok" name (or (plist-get sums :cost) 0)
                          (+ (or (plist-get sums :tokens-in) 0)
                             (or (plist-get sums :tokens-out) 0)))))))
    (mapconcat #'identity
               (delq nil (list (and turn (funcall part "turn" turn))
                               (funcall part "session" (plist-get usage :session))
                               (funcall part "today" (plist-get usage :today))))
               " | ")))

;;;###autoload
(defun passepartout-cost (&optional session)
  "Show the tokens and cost of SESSION and of today, from the ledger.
Interactively SESSION is the current chat buffer's session, if any."
  (interactive (list (bound-and-true-p passepartout-chat--session)))
  (let ((text (passepartout-usage-text
               (passepartout-call-sync 'usage (list session)))))
    (message "Passepartout: %s" (if (string-empty-p text) "nothing spent" text))
    text))

;; The callbacks and commands of the other files load when first needed.
(autoload 'passepartout-chat "passepartout-chat" "Open a Passepartout chat buffer." t)
(autoload 'passepartout-chat-new "passepartout-chat" "Open a new chat buffer." t)
(autoload 'passepartout-chat-resume "passepartout-chat"
  "Open a chat buffer for a past session, chosen with completion." t)
(autoload 'passepartout-chat-resume-file-maybe "passepartout-chat")
(autoload 'passepartout-context-show "passepartout-org"
  "Show what the next chat turn carries as org context." t)
(autoload 'passepartout-notices "passepartout-notices"
  "Show the notices of the daemon." t)
(autoload 'passepartout-notices-add "passepartout-notices")
(autoload 'passepartout-notices-open-plan "passepartout-notices"
  "Open the approvals file at a Flight Plan." t)
(autoload 'passepartout-approvals-mode "passepartout-notices"
  "The approvals file: its TODO keywords cycle to APPROVED and REJECTED." t)
(autoload 'passepartout-menu "passepartout-menu" "The menu of every Passepartout command." t)
(autoload 'passepartout-send "passepartout-send" "Send the region, subtree or buffer." t)
(autoload 'passepartout-send-region "passepartout-send" "Send the region." t)
(autoload 'passepartout-send-subtree "passepartout-send" "Send the org subtree." t)
(autoload 'passepartout-send-buffer "passepartout-send" "Send the buffer." t)
(autoload 'passepartout-rewrite "passepartout-rewrite" "Rewrite the region." t)
(autoload 'passepartout-context-add-file "passepartout-context" "Add a file to the context." t)
(autoload 'passepartout-context-add-buffer "passepartout-context" "Add a buffer to the context." t)
(autoload 'passepartout--on-chunk "passepartout-chat")
(autoload 'passepartout--on-done "passepartout-chat")
(autoload 'passepartout--on-error "passepartout-chat")
(autoload 'passepartout--on-tool "passepartout-chat")
(autoload 'passepartout--on-approval "passepartout-approval")
(autoload 'passepartout-approval-ask-minibuffer "passepartout-approval")
(autoload 'passepartout-org-mode "passepartout-org"
  "Send Passepartout the edits of :HOOK: and :CRON: headings, and the focus." t)
(autoload 'global-passepartout-org-mode "passepartout-org"
  "Turn `passepartout-org-mode' on in every org buffer." t)
(autoload 'passepartout-org-list-jobs "passepartout-org"
  "Show the server's cron jobs, soonest first, in an org buffer." t)


;;;; Links and saved chats

(defun passepartout-open-link (session _arg)
  "Open the chat SESSION of a passepartout: org link."
  (passepartout-chat-resume session))

(org-link-set-parameters "passepartout" :follow #'passepartout-open-link)

(defun passepartout--chat-file-p ()
  "Return non-nil in a visited saved chat: a session line near its top."
  (and buffer-file-name
       (save-excursion
         (goto-char (point-min))
         (re-search-forward "^#\\+passepartout_session:[ \t]*[^ \t\n]"
                            (min (point-max) 4096) t))))

(defun passepartout--visit-chat-file ()
  "Make a visited saved chat a chat again; only then load the chat code."
  (when (passepartout--chat-file-p)
    (passepartout-chat-resume-file-maybe)))

;; A chat saved as an org file is a chat again when it is visited.
(add-hook 'org-mode-hook #'passepartout--visit-chat-file)

(provide 'passepartout)
;;; passepartout.el ends here
