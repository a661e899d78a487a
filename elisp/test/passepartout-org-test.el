;;; passepartout-org-test.el --- Tests of passepartout-org-mode  -*- lexical-binding: t; -*-

;;; Commentary:

;; What the minor mode sends when :CRON: and :HOOK: headings change, and,
;; against the real server, that the server follows: a :CRON: drawer added
;; in Emacs is listed with the right next run, an edited repeater updates
;; it, a removed drawer removes it, and an edited :HOOK: node fires the gate
;; a skill registered, whose result comes back as a notification.

;;; Code:

(require 'passepartout-test-helpers)
(require 'passepartout-org)

(defconst passepartout-org-test-file-text
  "#+TITLE: Plans
* Projects
** Weekly
Summarize the week's notes.
** Guarded
:PROPERTIES:
:ID: guarded-1
:HOOK: check-me
:END:
Keep this clean.
"
  "The org file the tests edit.")

(defconst passepartout-org-test-skill
  "\"\"\"A gate for the hook check-me, for the Emacs tests.\"\"\"
from passepartout.api import Verdict, host

DEPENDS_ON = [\"events\"]
AGENT = host()


def orgtest_gate(event):
    if event.new is not None and \"forbidden\" in event.new:
        return Verdict.deny(\"forbidden words in \" + event.heading)
    return Verdict.allow(\"clean\")


AGENT.register_hook(\"check-me\", orgtest_gate, \"gate\")
"
  "A skill that registers a gate for the hook check-me.")

(defmacro passepartout-org-test-with-buffer (text &rest body)
  "Run BODY in an org buffer visiting a temporary file with TEXT."
  (declare (indent 1) (debug t))
  `(let* ((file (make-temp-file "passepartout-org-" nil ".org" ,text))
          (buffer (find-file-noselect file)))
     (unwind-protect
         (with-current-buffer buffer ,@body)
       (with-current-buffer buffer (set-buffer-modified-p nil))
       (kill-buffer buffer)
       (delete-file file))))

(defun passepartout-org-test-goto (heading)
  "Move point to the heading titled HEADING."
  (goto-char (org-find-exact-headline-in-buffer heading nil t)))

(defun passepartout-org-test-edits (fn)
  "Call FN and return the org-edit plists the mode would send meanwhile."
  (let (edits)
    (let ((passepartout-org-edit-functions (list (lambda (edit) (push edit edits)))))
      (funcall fn))
    (nreverse edits)))

;;;; Without a server

(ert-deftest passepartout-org-test-changes-are-sent-on-save ()
  "Adding, changing and removing a drawer each make one org-edit."
  (passepartout-org-test-with-buffer passepartout-org-test-file-text
    (passepartout-org-mode 1)
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (passepartout-org-test-goto "Weekly")
                    (org-set-property "CRON" "<2030-01-07 Mon 09:00 +1w>")
                    (save-buffer)))))
      (should (= (length edits) 1))
      (let ((edit (car edits)))
        (should (eq (plist-get edit :action) 'added))
        (should (equal (plist-get edit :file) (expand-file-name buffer-file-name)))
        (should (equal (plist-get edit :heading) "Weekly"))
        (should (equal (plist-get edit :outline) '("Projects")))
        (should (null (plist-get edit :old)))
        (should (string-match-p ":CRON: +<2030-01-07 Mon 09:00 \\+1w>" (plist-get edit :new)))))
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (passepartout-org-test-goto "Weekly")
                    (org-set-property "CRON" "<2030-01-08 Tue 10:00 +2d>")
                    (save-buffer)))))
      (should (equal (mapcar (lambda (e) (plist-get e :action)) edits) '(changed)))
      (should (string-match-p "\\+1w" (plist-get (car edits) :old)))
      (should (string-match-p "\\+2d" (plist-get (car edits) :new))))
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (passepartout-org-test-goto "Weekly")
                    (org-delete-property "CRON")
                    (save-buffer)))))
      (should (equal (mapcar (lambda (e) (plist-get e :action)) edits) '(removed)))
      (should (null (plist-get (car edits) :new))))))

(ert-deftest passepartout-org-test-quiet-saves-send-nothing ()
  "Edits outside watched headings, and unchanged saves, send nothing."
  (passepartout-org-test-with-buffer passepartout-org-test-file-text
    (passepartout-org-mode 1)
    (should (null (passepartout-org-test-edits
                   (lambda ()
                     (passepartout-org-test-goto "Weekly")
                     (end-of-line)
                     (insert " (edited)")
                     (save-buffer)))))
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (passepartout-org-test-goto "Guarded")
                    (org-end-of-meta-data t)
                    (insert "More text.\n")
                    (save-buffer)))))
      (should (equal (mapcar (lambda (e) (plist-get e :id)) edits) '("guarded-1"))))))

(ert-deftest passepartout-org-test-commented-and-archived-are-no-jobs ()
  "A drawer under a COMMENT or an archived heading is no job: its heading goes."
  (passepartout-org-test-with-buffer passepartout-org-test-file-text
    (passepartout-org-mode 1)
    (passepartout-org-test-goto "Weekly")
    (org-set-property "CRON" "<2030-01-07 Mon 09:00 +1w>")
    (save-buffer)
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (passepartout-org-test-goto "Projects")
                    (org-toggle-comment)
                    (save-buffer)))))
      (should (equal (sort (mapcar (lambda (e) (plist-get e :heading)) edits) #'string<)
                     '("Guarded" "Weekly")))
      (should (equal (mapcar (lambda (e) (plist-get e :action)) edits) '(removed removed))))
    (let ((edits (passepartout-org-test-edits
                  (lambda ()
                    (goto-char (point-min))
                    (re-search-forward "^\\* COMMENT Projects")
                    (org-toggle-comment)
                    (passepartout-org-test-goto "Guarded")
                    (org-toggle-tag org-archive-tag 'on)
                    (save-buffer)))))
      (should (equal (mapcar (lambda (e) (plist-get e :heading)) edits) '("Weekly")))
      (should (equal (mapcar (lambda (e) (plist-get e :action)) edits) '(added))))))

(ert-deftest passepartout-org-test-focus-plist ()
  "The focus names the file, id, title, outline and body of the heading at point."
  (passepartout-org-test-with-buffer passepartout-org-test-file-text
    (passepartout-org-test-goto "Guarded")
    (forward-line 6)
    (should (equal (passepartout-org-focus)
                   (list :file (expand-file-name buffer-file-name) :id "guarded-1"
                         :heading "Guarded" :outline '("Projects")
                         :body (concat ":PROPERTIES:\n:ID: guarded-1\n:HOOK: check-me\n"
                                       ":END:\nKeep this clean."))))
    (goto-char (point-min))
    (should (null (passepartout-org-focus)))))

(ert-deftest passepartout-org-test-global-mode-turns-on-in-org-buffers ()
  "The global mode turns the minor mode on in org buffers only."
  (let ((org (generate-new-buffer "org"))
        (text (generate-new-buffer "text")))
    (unwind-protect
        (progn
          (global-passepartout-org-mode 1)
          (with-current-buffer org (org-mode))
          (with-current-buffer text (text-mode))
          (should (buffer-local-value 'passepartout-org-mode org))
          (should-not (buffer-local-value 'passepartout-org-mode text))
          (should passepartout-org--focus-timer))
      (global-passepartout-org-mode -1)
      (kill-buffer org)
      (kill-buffer text))
    (should-not passepartout-org--focus-timer)))

;;;; Against the real server

(defun passepartout-org-test-jobs ()
  "The server's jobs outside its own system files, asked synchronously.
The background skills keep their jobs in the memex's system directory."
  (seq-remove (lambda (job)
                (string-match-p "/system/" (or (plist-get job :file) "")))
              (passepartout-epc-call-sync passepartout--connection 'jobs nil 10)))

(defun passepartout-org-test-wait-job (predicate what)
  "Wait until the server's jobs satisfy PREDICATE; WHAT names it on failure."
  (passepartout-test-wait (lambda () (funcall predicate (passepartout-org-test-jobs)))
                          30 what))

(defun passepartout-org-test-log-has (regexp)
  "Non-nil when the *passepartout-log* buffer matches REGEXP."
  (with-current-buffer (passepartout--log-buffer)
    (save-excursion
      (goto-char (point-min))
      (re-search-forward regexp nil t))))

(defvar passepartout-org-test-asked nil
  "The questions the server asked in the test, newest first.")

(defun passepartout-org-test-asked-about (regexp)
  "The questions asked so far that match REGEXP."
  (seq-filter (lambda (q) (string-match-p regexp q)) passepartout-org-test-asked))

(ert-deftest passepartout-org-test-server-follows-the-drawers ()
  "Add, change and remove a :CRON: drawer, and fire a hook's gate, in Emacs.
Each new or changed job is asked about once on save, and runs once approved."
  (let* ((dir (make-temp-file "passepartout-org-test-" t))
         (passepartout-org-test-asked nil)
         (passepartout-approval-function
          (lambda (description _info) (push description passepartout-org-test-asked) t))
         (memex (expand-file-name "memex" dir))
         (skills (expand-file-name "skills" dir))
         ;; Outside the scanned directories: only Emacs tells the server about it.
         (file (expand-file-name "elsewhere/plans.org" memex))
         (process-environment (append (list (concat "MEMEX_DIR=" memex)
                                            (concat "SKILLS_DIR=" skills)
                                            "TZ=UTC")
                                      process-environment)))
    (make-directory (file-name-directory file) t)
    (make-directory skills t)
    (with-temp-file (expand-file-name "orgtest.py" skills)
      (insert passepartout-org-test-skill))
    (with-temp-file file (insert passepartout-org-test-file-text))
    (unwind-protect
        (passepartout-test-with-server nil
          (let ((buffer (find-file-noselect file)))
            (unwind-protect
                (with-current-buffer buffer
                  (passepartout-org-mode 1)
                  (should (null (passepartout-org-test-jobs)))
                  ;; Add a drawer: the server lists the job with its next run.
                  (passepartout-org-test-goto "Weekly")
                  (org-set-property "CRON" "<2030-01-07 Mon 09:00 +1w>")
                  (save-buffer)
                  ;; Asked once, right there, about what runs; then it runs.
                  (let ((job (car (passepartout-org-test-wait-job
                                   (lambda (jobs) jobs) "the new job"))))
                    (should (equal (length (passepartout-org-test-asked-about
                                            "^job:allow: new job in elsewhere/plans\\.org: \
runs every Monday at 09:00 from 2030-01-07, cognition tier, prompt: Weekly \
Summarize the week's notes\\."))
                                   1))
                    (should (equal (plist-get job :heading) "Weekly"))
                    (should (equal (plist-get job :file) file))
                    (should (equal (plist-get job :timestamp) "<2030-01-07 Mon 09:00 +1w>"))
                    (should (equal (plist-get job :next-run) "2030-01-07T09:00:00+00:00"))
                    (should (equal (plist-get job :tier) "cognition")))
                  ;; Change the repeater: the job follows.
                  (passepartout-org-test-goto "Weekly")
                  (org-set-property "CRON" "<2030-01-08 Tue 10:00 +2d>")
                  (save-buffer)
                  (passepartout-org-test-wait-job
                   (lambda (jobs)
                     (equal (plist-get (car jobs) :next-run) "2030-01-08T10:00:00+00:00"))
                   "the edited job")
                  ;; The approved job, edited by the person: asked again.
                  (should (equal (length (passepartout-org-test-asked-about
                                          "^job:allow: changed job in .*every 2 days at 10:00"))
                                 1))
                  (should (= (length (passepartout-org-test-jobs)) 1))
                  ;; Remove it: gone.
                  (passepartout-org-test-goto "Weekly")
                  (org-delete-property "CRON")
                  (save-buffer)
                  (passepartout-org-test-wait-job #'null "the job to go")
                  ;; Only the edited heading changed: no hook fired for the others.
                  (should-not (passepartout-org-test-log-has "hook: check-me"))
                  ;; Edit the hook node: the registered gate fires and says so.
                  (passepartout-org-test-goto "Guarded")
                  (org-end-of-meta-data t)
                  (insert "Some forbidden text.\n")
                  (save-buffer)
                  (passepartout-test-wait
                   (lambda () (passepartout-org-test-log-has
                               "notify warning: hook: check-me on 'Guarded' (changed): \
orgtest_gate deny: forbidden words in Guarded"))
                   30 "the gate's notification")
                  ;; The focus plist is one the server takes.
                  (should (passepartout-epc-call-sync passepartout--connection 'focus
                                                      (list (passepartout-org-focus)) 10))
                  (let ((events (expand-file-name "home/events.org" state-dir)))
                    (should (file-exists-p events))
                    (with-temp-buffer
                      (insert-file-contents events)
                      (should (string-match-p "forbidden words in Guarded" (buffer-string))))))
              (with-current-buffer buffer (set-buffer-modified-p nil))
              (kill-buffer buffer))))
      (delete-directory dir t))))

(provide 'passepartout-org-test)
;;; passepartout-org-test.el ends here
