;;; passepartout-models.el --- Model, tier and preset of a chat turn  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; URL: https://github.com/passepartout-agent/passepartout

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; Which model answers a turn, and how.  `passepartout-select-model'
;; completes over the models the server is configured with (its
;; default, each tier's, the fallbacks and the local model) and sets
;; `passepartout-model' for the current buffer, or everywhere with a
;; prefix argument.  `passepartout-select-tier' and
;; `passepartout-select-preset' do the same for the tier and the preset.
;;
;; A preset is a name for a plist of :model, :tier, :system (text added
;; to the system prompt), :tools (the tools the turn may use: a subset,
;; the gates still decide each call) and :budget (USD, a cap on the
;; turn).  Presets come from `passepartout-presets' and from the org
;; file `passepartout-presets-file', one heading per preset with
;; properties MODEL, TIER, TOOLS (space-separated) and BUDGET, and the
;; heading's text as the system addition.
;;
;; In org buffers (a chat buffer is one), the properties
;; PASSEPARTOUT_MODEL, PASSEPARTOUT_TIER and PASSEPARTOUT_PRESET at
;; point are read with inheritance, like org's own, so a subtree or a
;; file (#+PROPERTY:) can choose.  A choice made with the commands in a
;; buffer wins over the properties, which win over the preset, which
;; wins over the global `passepartout-model'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'passepartout)

(defcustom passepartout-presets nil
  "Presets of a chat turn: an alist of NAME (a string) -> PLIST.
PLIST may hold :model (a litellm model name), :tier (\"cognition\" or
\"reasoning\"), :system (text added to the system prompt), :tools (a
list of tool names the turn may use) and :budget (USD the turn may
spend at most)."
  :type '(alist :key-type string :value-type plist)
  :group 'passepartout)

(defcustom passepartout-presets-file nil
  "An org file of presets, or nil for the file the daemon reads its own from.
Each top-level heading is a preset named by its title; its properties
MODEL, TIER, TOOLS (names separated by spaces) and BUDGET, and its
text (the system addition) fill the preset's plist.  The daemon reads
presets in this format too, for the jobs under a subtree that names
one with PASSEPARTOUT_PRESET: from PASSEPARTOUT_PRESETS_FILE, by default
presets.org in its configuration directory (its status names it).
With nil, Emacs reads that file: a chat turn and the jobs under a
subtree know the same presets."
  :type '(choice (const :tag "The daemon's presets file" nil) file)
  :group 'passepartout)

(defvar-local passepartout-tier nil
  "The tier this buffer's turns ask for (\"cognition\", \"reasoning\"), or nil.")

(defvar-local passepartout-preset nil
  "The name of the preset this buffer's turns use, or nil.")

(defconst passepartout-models-tiers '("cognition" "reasoning")
  "The tiers a turn may ask for.")

;;;; Candidates

(defun passepartout-models-candidates ()
  "Return the models the server is configured with, default first.
Each is a string; the server lists its default, each tier's model, the
fallbacks and the local model, then the models of an Ollama or llama.cpp
server running on this machine (as ollama/NAME and llamafile/NAME)."
  (let ((listed (passepartout-call-sync 'models nil)))
    (or (plist-get listed :all)
        (user-error "Passepartout: the server names no model"))))

(defun passepartout-models--file-presets (file)
  "Return the presets of the org FILE, an alist like `passepartout-presets'."
  (with-temp-buffer
    (insert-file-contents file)
    (let ((org-inhibit-startup t))
      (delay-mode-hooks (org-mode)))
    (let (found)
      (org-map-entries
       (lambda ()
         (let* ((name (org-get-heading t t t t))
                (tools (org-entry-get nil "TOOLS"))
                (budget (org-entry-get nil "BUDGET"))
                (system (passepartout-models--entry-text)))
           (push (cons name
                       (append
                        (passepartout-models--some :model (org-entry-get nil "MODEL"))
                        (passepartout-models--some :tier (org-entry-get nil "TIER"))
                        (passepartout-models--some :system system)
                        (and tools (list :tools (split-string tools)))
                        (passepartout-models--some :budget budget)))
                 found)))
       "LEVEL=1")
      (nreverse found))))

(defun passepartout-models--entry-text ()
  "Return the text of the entry at point, without drawers, or nil."
  (save-excursion
    (org-back-to-heading t)
    (let ((end (save-excursion (outline-next-heading) (point))))
      (org-end-of-meta-data t)
      (let ((text (string-trim (buffer-substring-no-properties (min (point) end) end))))
        (and (not (string-empty-p text)) text)))))

(defun passepartout-models--some (key value)
  "Return (KEY VALUE) when VALUE is a non-empty string, else nil."
  (and (stringp value) (not (string-empty-p (string-trim value)))
       (list key (string-trim value))))

(defun passepartout-models--daemon-presets-file ()
  "Return the daemon's presets file, as its last status named it, or nil."
  (let ((file (plist-get passepartout--last-status :presets-file)))
    (and (stringp file) (not (string-empty-p file)) file)))

(defun passepartout-models-presets ()
  "Return every preset: `passepartout-presets', then those of the presets file.
The presets file is `passepartout-presets-file', else the daemon's.  A
name defined in both is the one of `passepartout-presets'."
  (let ((file (or passepartout-presets-file (passepartout-models--daemon-presets-file))))
    (append passepartout-presets
            (and file (file-readable-p file)
                 (passepartout-models--file-presets file)))))

(defun passepartout-models-preset (name)
  "Return the plist of the preset NAME, or signal a `user-error'."
  (or (cdr (assoc name (passepartout-models-presets)))
      (user-error "Passepartout: no preset named %S (see `passepartout-presets')" name)))

;;;; Commands

(defun passepartout-models--set (variable value global what)
  "Set VARIABLE to VALUE here, or everywhere when GLOBAL; say so, naming WHAT."
  (if global
      (set-default variable value)
    (set (make-local-variable variable) value))
  (message "Passepartout: %s %s%s" what (or value "the server's default")
           (if global " everywhere" " in this buffer")))

;;;###autoload
(defun passepartout-select-model (model &optional global)
  "Ask for MODEL when sending from this buffer, among those configured.
With a prefix argument (GLOBAL), choose it for every buffer.  An empty
answer goes back to the server's default."
  (interactive
   (list (completing-read "Model (empty: server default): "
                          (passepartout-models-candidates) nil nil nil nil "")
         current-prefix-arg))
  (passepartout-models--set 'passepartout-model
                            (and (not (string-empty-p model)) model) global "model"))

;;;###autoload
(defun passepartout-select-tier (tier &optional global)
  "Ask for TIER, cognition or reasoning, when sending from this buffer.
With a prefix argument (GLOBAL), choose it for every buffer.  An empty
answer lets each skill choose."
  (interactive
   (list (completing-read "Tier (empty: the skill's choice): "
                          passepartout-models-tiers nil t nil nil "")
         current-prefix-arg))
  (unless (or (string-empty-p tier) (member tier passepartout-models-tiers))
    (user-error "Passepartout: no tier %S (cognition or reasoning)" tier))
  (passepartout-models--set 'passepartout-tier
                            (and (not (string-empty-p tier)) tier) global "tier"))

;;;###autoload
(defun passepartout-select-preset (name &optional global)
  "Use the preset NAME when sending from this buffer.
With a prefix argument (GLOBAL), choose it for every buffer.  An empty
answer uses no preset."
  (interactive
   (let ((names (mapcar #'car (passepartout-models-presets))))
     (unless names
       (user-error "Passepartout: no preset is defined (`passepartout-presets', `passepartout-presets-file')"))
     (list (completing-read "Preset (empty: none): " names nil t nil nil "")
           current-prefix-arg)))
  (let ((name (and (not (string-empty-p name)) name)))
    (when name (passepartout-models-preset name))
    (passepartout-models--set 'passepartout-preset name global "preset")))

;;;; What a turn sends

(defun passepartout-models--property (name)
  "Return the org property NAME at point, inherited, or nil outside org.
The heading at point, then its ancestors, then the file's #+PROPERTY
and `org-global-properties'.  The walk is explicit: the inheritance of
`org-entry-get' in Org 9.5 can reach a previous sibling's subtree."
  (when (derived-mode-p 'org-mode)
    (let ((value
           (save-excursion
             (or (catch 'found
                   (unless (org-before-first-heading-p)
                     (org-back-to-heading t)
                     (while (progn
                              (let ((here (org-entry-get nil name)))
                                (when here (throw 'found here)))
                              (org-up-heading-safe))))
                   nil)
                 (cdr (assoc-string name (or (bound-and-true-p org-keyword-properties)
                                             (bound-and-true-p org-file-properties))
                                    t))
                 (cdr (assoc-string name org-global-properties t))))))
      (and (stringp value) (not (string-empty-p (string-trim value)))
           (string-trim value)))))

(defun passepartout-models--choice (variable property)
  "Return the buffer's own VARIABLE, else the org PROPERTY at point, else nil."
  (if (local-variable-p variable)
      (symbol-value variable)
    (passepartout-models--property property)))

(defun passepartout-models-turn-context (&optional where)
  "Return the plist of model, tier and preset fields a turn sends from here.
WHERE, a marker, reads them at that place (the org heading a text is
sent from) instead of at point.  Keys :model, :tier, :system, :tools
and :budget; absent ones are left out.  The buffer's own choice wins
over the org properties at point, which win over the preset, which wins
over the global `passepartout-model'."
  (if (and (markerp where) (marker-buffer where))
      (with-current-buffer (marker-buffer where)
        (save-excursion
          (goto-char where)
          (passepartout-models--turn-context)))
    (passepartout-models--turn-context)))

(defun passepartout-models--turn-context ()
  "Return the fields of `passepartout-models-turn-context' at point."
  (let* ((preset-name (or (passepartout-models--choice 'passepartout-preset
                                                       "PASSEPARTOUT_PRESET")
                          passepartout-preset))
         (preset (and preset-name (passepartout-models-preset preset-name)))
         (model (or (passepartout-models--choice 'passepartout-model "PASSEPARTOUT_MODEL")
                    (plist-get preset :model)
                    passepartout-model))
         (tier (or (passepartout-models--choice 'passepartout-tier "PASSEPARTOUT_TIER")
                   (plist-get preset :tier)
                   passepartout-tier))
         (budget (plist-get preset :budget)))
    (append (and model (list :model model))
            (and tier (list :tier tier))
            (and (plist-get preset :system) (list :system (plist-get preset :system)))
            ;; An empty list goes as ("") so that it allows no tool, not every tool.
            (and (plist-member preset :tools)
                 (list :tools (or (plist-get preset :tools) (list ""))))
            (and budget (list :budget (if (numberp budget) budget (format "%s" budget)))))))

(provide 'passepartout-models)
;;; passepartout-models.el ends here
