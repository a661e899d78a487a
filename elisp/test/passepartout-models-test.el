;;; passepartout-models-test.el --- Model, tier and preset of a turn  -*- lexical-binding: t; -*-

;;; Commentary:

;; The model picker completes over what the real server is configured
;; with, and a model chosen in a chat buffer is the one the fake model
;; is asked for; org properties choose a model, tier and preset for a
;; subtree, inherited; presets come from Elisp and from an org file.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-models)

(defmacro passepartout-models-test-with-org (text &rest body)
  "Run BODY in a temporary org buffer holding TEXT, point at its start."
  (declare (indent 1) (debug t))
  `(with-temp-buffer
     (insert ,text)
     (let ((org-inhibit-startup t)) (org-mode))
     (goto-char (point-min))
     ,@body))

(ert-deftest passepartout-models-test-candidates-from-the-server ()
  "The picker offers the server's configured models, and the chosen one is asked for."
  (passepartout-test-with-shared-server
      '(((model . "other-model") (text . "answered by the other model")))
    (let ((candidates (passepartout-models-candidates)))
      (should (equal (car candidates) "openai/fake-model"))
      (should (member "local/smollm2" candidates)))
    (let* ((buffer (passepartout-chat))
           (offered nil))
      (with-current-buffer buffer
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt collection &rest _)
                     (setq offered collection)
                     "openai/other-model")))
          (call-interactively #'passepartout-select-model))
        (should (member "openai/fake-model" offered))
        (should (local-variable-p 'passepartout-model))
        (should (equal passepartout-model "openai/other-model")))
      (should-not (default-value 'passepartout-model))
      ;; Only a request naming other-model has a scripted reply.
      (let ((turn (passepartout-test-prompt buffer "who answers?")))
        (should (eq (passepartout-test-wait-turn turn) 'done))
        (should (string-match-p "answered by the other model"
                                (passepartout-turn-reply turn)))))))

(defun passepartout-models-test--last-request ()
  "Return the body of the last request the shared fake model received, an alist."
  (let* ((process (car (passepartout-test--shared-fake)))
         (buffer (process-buffer process)))
    (with-current-buffer buffer (erase-buffer))
    (process-send-string process "\"last-request\"\n")
    (passepartout-test-wait
     (lambda () (with-current-buffer buffer
                  (save-excursion (goto-char (point-min)) (looking-at ".*\n"))))
     10 "the fake model's last request")
    (with-current-buffer buffer
      (goto-char (point-min))
      (json-parse-string (buffer-substring (point) (line-end-position))
                         :object-type 'alist :array-type 'list))))

(ert-deftest passepartout-models-test-preset-reaches-the-request ()
  "A preset chosen in the chat buffer sets the request's model, system text and tools."
  (passepartout-test-with-shared-server
      '(((model . "preset-model") (text . "ok from the preset")))
    (let ((passepartout-presets
           '(("french" :model "openai/preset-model" :tier "cognition"
              :system "Answer in French.\n* Not a heading" :tools ("read-file")
              :budget 1.0)))
          (buffer (passepartout-chat)))
      (with-current-buffer buffer
        (passepartout-select-preset "french"))
      (let ((turn (passepartout-test-prompt buffer "bonjour")))
        (should (eq (passepartout-test-wait-turn turn) 'done))
        (should (string-match-p "ok from the preset" (passepartout-turn-reply turn))))
      (let* ((body (passepartout-models-test--last-request))
             (system (alist-get 'content (car (alist-get 'messages body))))
             (system (if (stringp system)
                         system
                       (mapconcat (lambda (part) (alist-get 'text part)) system ""))))
        (should (equal (alist-get 'model body) "preset-model"))
        (should (string-match-p "Answer in French\\." system))
        (should-not (string-match-p "^\\* Not a heading" system))
        (should (equal (mapcar (lambda (tool) (alist-get 'name (alist-get 'function tool)))
                               (alist-get 'tools body))
                       '("read-file")))))))

(ert-deftest passepartout-models-test-prefix-sets-globally ()
  "With a prefix argument the model is chosen for every buffer."
  (let ((passepartout-model nil))
    (with-temp-buffer
      (passepartout-select-model "openai/x" t)
      (should-not (local-variable-p 'passepartout-model))
      (should (equal (default-value 'passepartout-model) "openai/x")))
    (with-temp-buffer
      (passepartout-select-model "" t)
      (should-not passepartout-model))))

(ert-deftest passepartout-models-test-org-properties-are-inherited ()
  "A subtree's properties choose the model, tier and preset of the headings below."
  (let ((passepartout-presets
         '(("terse" :system "Answer in one line." :tools ("read-file") :budget 0.05
            :model "openai/preset-model"))))
    (passepartout-models-test-with-org
        (concat "* Project\n:PROPERTIES:\n:PASSEPARTOUT_PRESET: terse\n"
                ":PASSEPARTOUT_TIER: cognition\n:END:\n"
                "** Task\nbody\n"
                "** Other\n:PROPERTIES:\n:PASSEPARTOUT_MODEL: openai/own\n:END:\n"
                "* Elsewhere\n")
      (re-search-forward "^\\*\\* Task")
      (should (equal (passepartout-models-turn-context)
                     '(:model "openai/preset-model" :tier "cognition"
                       :system "Answer in one line." :tools ("read-file") :budget 0.05)))
      (re-search-forward "^\\*\\* Other")
      (should (equal (plist-get (passepartout-models-turn-context) :model) "openai/own"))
      ;; The buffer's own choice wins over the properties.
      (setq-local passepartout-model "openai/mine")
      (should (equal (plist-get (passepartout-models-turn-context) :model) "openai/mine"))
      (kill-local-variable 'passepartout-model)
      (let ((task (save-excursion (goto-char (point-min))
                                  (re-search-forward "^\\*\\* Task")
                                  (point-marker))))
        (with-temp-buffer  ; sending from elsewhere, the place given
          (should (equal (plist-get (passepartout-models-turn-context task) :tier)
                         "cognition"))))
      (re-search-forward "^\\* Elsewhere")
      (let ((passepartout-model "openai/global"))
        (should (equal (passepartout-models-turn-context) '(:model "openai/global")))))))

(ert-deftest passepartout-models-test-file-property ()
  "A #+PROPERTY line chooses for the whole file, a chat buffer's included."
  (passepartout-models-test-with-org
      "#+PROPERTY: PASSEPARTOUT_TIER reasoning\n* You\nhello\n"
    (goto-char (point-max))
    (let ((passepartout-model nil))
      (should (equal (passepartout-models-turn-context) '(:tier "reasoning"))))))

(ert-deftest passepartout-models-test-presets-file ()
  "Presets are read from an org file: properties and the heading's text."
  (let* ((file (make-temp-file "passepartout-presets-" nil ".org"
                               (concat "* reviewer\n:PROPERTIES:\n:MODEL: openai/big\n"
                                       ":TIER: reasoning\n:TOOLS: read-file search-notes\n"
                                       ":BUDGET: 0.20\n:END:\nReview strictly.\n"
                                       "* no tools\n:PROPERTIES:\n:TOOLS:\n:END:\n")))
         (passepartout-presets-file file)
         (passepartout-presets '(("mine" :tier "cognition"))))
    (unwind-protect
        (progn
          (should (equal (mapcar #'car (passepartout-models-presets))
                         '("mine" "reviewer" "no tools")))
          (should (equal (passepartout-models-preset "reviewer")
                         '(:model "openai/big" :tier "reasoning" :system "Review strictly."
                           :tools ("read-file" "search-notes") :budget "0.20")))
          (with-temp-buffer
            (cl-letf (((symbol-function 'completing-read)
                       (lambda (_prompt collection &rest _)
                         (should (member "reviewer" collection))
                         "reviewer")))
              (call-interactively #'passepartout-select-preset))
            (should (equal passepartout-preset "reviewer"))
            (should (equal (plist-get (passepartout-models-turn-context) :tools)
                           '("read-file" "search-notes"))))
          (should-error (passepartout-select-preset "nonesuch") :type 'user-error))
      (delete-file file))))

(ert-deftest passepartout-models-test-the-daemons-presets ()
  "Without a presets file of its own, Emacs reads the one the daemon reads."
  (passepartout-test-with-shared-server nil
    (let* ((file (plist-get (passepartout-call-sync 'status nil) :presets-file))
           (passepartout-presets-file nil)
           (passepartout-presets nil))
      (should (stringp file))
      (should-not (file-exists-p file))
      (make-directory (file-name-directory file) t)
      (unwind-protect
          (progn
            (with-temp-file file
              (insert "* night jobs\n:PROPERTIES:\n:TOOLS: read-file\n:END:\n"
                      "Answer in one line.\n"))
            (setq passepartout--last-status (passepartout-call-sync 'status nil))
            (should (equal (passepartout-models-preset "night jobs")
                           '(:system "Answer in one line." :tools ("read-file"))))
            ;; A file of one's own is read instead.
            (let ((passepartout-presets-file (make-temp-file "passepartout-presets-")))
              (unwind-protect
                  (should-not (assoc "night jobs" (passepartout-models-presets)))
                (delete-file passepartout-presets-file))))
        (delete-file file)))))

(provide 'passepartout-models-test)
;;; passepartout-models-test.el ends here
