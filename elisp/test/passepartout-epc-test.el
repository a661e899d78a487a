;;; passepartout-epc-test.el --- Tests of the EPC transport  -*- lexical-binding: t; -*-

;;; Commentary:

;; Framing, decoding and the allow-list, without a server: a connection
;; whose answers are queued (not sent) shows what Emacs would reply.
;; The last test runs the transport against python-epc's own server.

;;; Code:

(require 'passepartout-test-helpers)

(defun passepartout-epc-test--conn (&rest handlers)
  "Return a connection without a process, queueing its frames; HANDLERS allowed."
  (passepartout-epc--make-connection :handlers handlers :replies nil
                                     :log-function #'ignore))

(defun passepartout-epc-test--sent (conn)
  "Return the objects CONN queued, decoded, oldest first."
  (mapcar (lambda (frame) (car (read-from-string
                                (decode-coding-string (substring frame 6) 'utf-8))))
          (reverse (passepartout-epc-connection-replies conn))))

(defun passepartout-epc-test--take (conn bytes)
  "Feed BYTES to a unibyte buffer and return (FRAMES . LEFTOVER) for CONN."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert bytes)
    (let ((frames (passepartout-epc--take-frames conn)))
      (cons frames (buffer-string)))))

(ert-deftest passepartout-epc-test-encode-counts-bytes ()
  "The length prefix counts UTF-8 bytes, not characters."
  (let ((frame (passepartout-epc-encode '(return 1 "é"))))
    (should (string-prefix-p "00000f" frame))
    (should (= (length frame) (+ 6 15)))
    (should (equal (passepartout-epc-encode nil) "000003nil"))))

(ert-deftest passepartout-epc-test-frames-round-trip ()
  "Encoded values read back equal, including newlines, quotes and non-ASCII."
  (let* ((value '(call 7 chat-send ("s1" "t1" "line 1\nline \"2\" \\ ü 日本" (:model nil :n 2.5))))
         (frame (passepartout-epc-encode value))
         (result (passepartout-epc-test--take (passepartout-epc-test--conn) frame)))
    (should (equal (car result) (list value)))
    (should (equal (cdr result) ""))))

(ert-deftest passepartout-epc-test-partial-frames-wait ()
  "A frame split anywhere is read only when it is complete."
  (let* ((conn (passepartout-epc-test--conn))
         (bytes (concat (passepartout-epc-encode '(return 1 "a"))
                        (passepartout-epc-encode '(return 2 "bé")))))
    (dotimes (cut (length bytes))
      (let ((first (passepartout-epc-test--take conn (substring bytes 0 cut))))
        (should (equal (substring bytes 0 cut)
                       (concat (mapconcat #'passepartout-epc-encode (car first) "")
                               (cdr first))))))))

(ert-deftest passepartout-epc-test-bad-header-closes ()
  "A header that is not six hexadecimal digits is fatal, not guessed at."
  (let ((result (passepartout-epc-test--take (passepartout-epc-test--conn) "zzzzzz(foo)")))
    (should (equal (car result) '((passepartout-epc--fatal "zzzzzz"))))
    (should (equal (cdr result) ""))))

(ert-deftest passepartout-epc-test-malformed-payload ()
  "A payload that does not read, or has trailing text, is reported as malformed."
  (let ((conn (passepartout-epc-test--conn)))
    (should (eq (car (caar (passepartout-epc-test--take conn "000004(a b")))
                'passepartout-epc--malformed))
    (should (eq (car (caar (passepartout-epc-test--take conn "000005(a) b")))
                'passepartout-epc--malformed))))

;;;; Attachments

(defun passepartout-epc-test--long (unit)
  "Return UNIT repeated past the attachment threshold."
  (apply #'concat (make-list (1+ (/ passepartout-epc--attachment-min (length unit))) unit)))

(ert-deftest passepartout-epc-test-attachments-round-trip ()
  "Long strings travel after the message, raw, and come back in their places."
  (let* ((ascii (passepartout-epc-test--long "plain \"text\" \\ line\n"))
         (utf-8 (passepartout-epc-test--long "ü 日本 \"é\"\n"))
         (value (list 'call 3 'echo (list ascii "short" (list :text utf-8 :n 1))))
         (frame (passepartout-epc-encode value t)))
    (should (string-match-p "\\`[0-9a-f]\\{6\\}(attachments [0-9]+ [0-9]+)(call 3 echo" frame))
    ;; Raw: the long strings are in the frame as they are, not printed.
    (should (string-search ascii frame))
    (should (string-search (encode-coding-string utf-8 'utf-8) frame))
    (let ((result (passepartout-epc-test--take (passepartout-epc-test--conn) frame)))
      (should (equal (car result) (list value)))
      (should (equal (cdr result) "")))
    ;; Without attachments, or with no long string, the frame is a plain one.
    (should-not (string-search "attachments" (passepartout-epc-encode value)))
    (should (equal (passepartout-epc-encode '(return 1 "a") t)
                   (passepartout-epc-encode '(return 1 "a"))))))

(ert-deftest passepartout-epc-test-placeholder-symbol-goes-plain ()
  "A value holding a symbol that reads as a placeholder is sent plain."
  (let* ((value (list 'return 1 (list (passepartout-epc-test--long "z")
                                      'passepartout-attachment-0)))
         (frame (passepartout-epc-encode value t)))
    (should-not (string-search "(attachments" frame))
    (should (equal (car (passepartout-epc-test--take (passepartout-epc-test--conn) frame))
                   (list value)))))

(ert-deftest passepartout-epc-test-detach-leaves-the-value-alone ()
  "Encoding with attachments does not modify the value sent."
  (let* ((long (passepartout-epc-test--long "x"))
         (value (list 'call 1 'echo (list long (cons 'a long))))
         (copy (copy-tree value)))
    (passepartout-epc-encode value t)
    (should (equal value copy))
    (should (eq (car (nth 3 value)) long))))

(ert-deftest passepartout-epc-test-bad-attachments-are-malformed ()
  "Each bad attachment is a malformed frame; the next frame still reads.
Bad are: sizes past the frame, a placeholder without its attachment, an
attachment without its placeholder, a placeholder used twice."
  (let ((conn (passepartout-epc-test--conn))
        (good (passepartout-epc-encode '(return 9 "ok"))))
    (dolist (payload '("(attachments 99)(return 1 passepartout-attachment-0)abc"
                       "(attachments 3)(return 1 passepartout-attachment-1)abc"
                       "(attachments 3)(return 1 nil)abc"
                       "(attachments 3 3)(return 1 (passepartout-attachment-0 passepartout-attachment-0))abcdef"
                       "(attachments x)(return 1 nil)"
                       "(attachments 3)(return 1 passepartout-attachment-0 abc"))
      (let* ((frame (concat (format "%06x" (length payload)) payload good))
             (frames (car (passepartout-epc-test--take conn frame))))
        (should (eq (car (car frames)) 'passepartout-epc--malformed))
        (should (equal (cadr frames) '(return 9 "ok")))))))

(ert-deftest passepartout-epc-test-large-frame-holds-gc-once ()
  "While a large frame arrives the collector waits, until the frame is whole.
A closed connection releases the collector too."
  (let* ((gc-cons-threshold 800000)
         (frame (passepartout-epc-encode
                 (list 'return 1 (passepartout-epc-test--long "y")) t))
         (conn (passepartout-epc-test--conn))
         (buffer (generate-new-buffer " *epc-hold*" t))
         (filter (passepartout-epc--filter conn))
         (process (make-pipe-process :name "epc-hold" :buffer buffer :noquery t))
         (values nil))
    (setf (passepartout-epc-connection-process conn) process)
    (puthash 1 (cons (lambda (v) (push v values)) nil) (passepartout-epc-connection-pending conn))
    (unwind-protect
        (let ((passepartout-epc--large-frame 1024))
          (with-current-buffer buffer (set-buffer-multibyte nil))
          (funcall filter process (substring frame 0 2000))
          (should passepartout-epc--gc-hold)
          (should (> gc-cons-threshold 800000))
          (funcall filter process (substring frame 2000))
          (should-not passepartout-epc--gc-hold)
          (should (= gc-cons-threshold 800000))
          (should (equal values (list (passepartout-epc-test--long "y"))))
          ;; A frame cut short by a closed connection releases it too.
          (funcall filter process (substring frame 0 2000))
          (should passepartout-epc--gc-hold)
          (passepartout-epc--closed conn)
          (should-not passepartout-epc--gc-hold)
          (should (= gc-cons-threshold 800000)))
      (passepartout-epc--release-gc)
      (delete-process process)
      (kill-buffer buffer))))

(ert-deftest passepartout-epc-test-allow-listed-call-runs ()
  "An allow-listed callback runs with the arguments as data and gets (return UID nil)."
  (let* ((got nil)
         (conn (passepartout-epc-test--conn
                (cons "passepartout--on-chunk" (lambda (&rest args) (setq got args))))))
    (passepartout-epc--dispatch conn '(call 5 passepartout--on-chunk ("s" "t" "(delete-file \"x\")")))
    (should (equal got '("s" "t" "(delete-file \"x\")")))
    (should (equal (passepartout-epc-test--sent conn) '((return 5 nil))))))

(ert-deftest passepartout-epc-test-protocol-names-reach-their-callbacks ()
  "The daemon's events arrive by protocol name; the callbacks' own names are refused."
  (require 'passepartout-server)
  (let* ((got nil)
         (conn (apply #'passepartout-epc-test--conn passepartout--callbacks)))
    (cl-letf (((symbol-function 'passepartout--on-notify)
               (lambda (&rest args) (push args got))))
      (passepartout-epc--dispatch conn '(call 1 notify (info "hi")))
      (passepartout-epc--dispatch conn '(call 2 passepartout--on-notify (info "forged"))))
    (should (equal got '((info "hi"))))
    (let ((sent (passepartout-epc-test--sent conn)))
      (should (equal (car sent) '(return 1 nil)))
      (should (eq (car (cadr sent)) 'epc-error)))
    (should (equal (mapcar #'car passepartout--callbacks)
                   '("chunk" "done" "error" "tool" "approval" "notify" "status"
                     "org-edit")))))

(ert-deftest passepartout-epc-test-method-as-string ()
  "A method name sent as a string is matched against the allow-list too."
  (let* ((got nil)
         (conn (passepartout-epc-test--conn
                (cons "passepartout--on-notify" (lambda (&rest args) (setq got args))))))
    (passepartout-epc--dispatch conn '(call 6 "passepartout--on-notify" (info "hi")))
    (should (equal got '(info "hi")))))

(ert-deftest passepartout-epc-test-refuses-everything-else ()
  "Functions outside the allow-list never run: eval, funcall, a lambda."
  (let* ((ran nil)
         (conn (passepartout-epc-test--conn (cons "passepartout--on-chunk" #'ignore))))
    (fset 'passepartout-epc-test--trap (lambda (&rest _) (setq ran t)))
    (dolist (frame `((call 1 eval ((passepartout-epc-test--trap)))
                     (call 2 funcall (passepartout-epc-test--trap))
                     (call 3 passepartout-epc-test--trap nil)
                     (call 4 (lambda () (passepartout-epc-test--trap)) nil)
                     (call 5 apply (passepartout-epc-test--trap nil))
                     (methods 6)))
      (passepartout-epc--dispatch conn frame))
    (should-not ran)
    (let ((sent (passepartout-epc-test--sent conn)))
      (should (= (length sent) 6))
      (should (cl-every (lambda (reply) (eq (car reply) 'epc-error)) sent))
      (should (equal (mapcar #'cadr sent) '(1 2 3 4 5 6))))))

(ert-deftest passepartout-epc-test-callback-error-is-return-error ()
  "A callback that fails answers return-error and the connection goes on."
  (let ((conn (passepartout-epc-test--conn
               (cons "passepartout--on-done" (lambda (&rest _) (error "Boom"))))))
    (passepartout-epc--dispatch conn '(call 9 passepartout--on-done ("s" "t" nil)))
    (should (equal (passepartout-epc-test--sent conn) '((return-error 9 "Boom"))))))

(ert-deftest passepartout-epc-test-answers-reach-callbacks ()
  "Answers (return, return-error, epc-error) reach the callback or errback."
  (let ((conn (passepartout-epc-test--conn)) (seen nil))
    (puthash 1 (cons (lambda (v) (push (list 'ok v) seen)) nil)
             (passepartout-epc-connection-pending conn))
    (puthash 2 (cons nil (lambda (e) (push (list 'err e) seen)))
             (passepartout-epc-connection-pending conn))
    (puthash 3 (cons nil (lambda (e) (push (list 'err e) seen)))
             (passepartout-epc-connection-pending conn))
    (passepartout-epc--dispatch conn '(return 1 (:a 1)))
    (passepartout-epc--dispatch conn '(return-error 2 (not-ready "booting")))
    (passepartout-epc--dispatch conn '(epc-error 3 "No such method"))
    (passepartout-epc--dispatch conn '(return 4 "unknown uid is dropped"))
    (should (equal (reverse seen) '((ok (:a 1)) (err (not-ready "booting"))
                                    (err (epc-error "No such method")))))
    (should (= (hash-table-count (passepartout-epc-connection-pending conn)) 0))
    (should (equal (passepartout-epc-format-error '(not-ready "booting"))
                   "not-ready: booting"))))

(ert-deftest passepartout-epc-test-against-python-epc ()
  "The transport talks to python-epc's server: calls, answers and callbacks."
  (let* ((script (make-temp-file "epc-server-" nil ".py" "
from epc.server import EPCServer
server = EPCServer(('127.0.0.1', 0))
server.register_function(lambda *a: list(a), name='echo')
def poke(n):
    for i in range(n):
        server.clients[0].call('passepartout--on-chunk', ['s', 't', 'x%d' % i])
    server.clients[0].call('eval', ['(kill-emacs)'])
    return n
server.register_function(poke)
print(server.server_address[1], flush=True)
server.serve_forever()
"))
         (buffer (generate-new-buffer " *epc-server*"))
         (process (make-process :name "epc-server" :buffer buffer :noquery t
                                :connection-type 'pipe
                                :command (list passepartout-test-python script)))
         (chunks nil) (log nil))
    (unwind-protect
        (let* ((port (passepartout-test-wait
                      (lambda () (with-current-buffer buffer
                                   (goto-char (point-min))
                                   (and (looking-at "\\([0-9]+\\)\n")
                                        (string-to-number (match-string 1)))))
                      30 "python-epc's port"))
               (conn (passepartout-epc-connect
                      "127.0.0.1" port
                      :handlers (list (cons "passepartout--on-chunk"
                                            (lambda (_s _t x) (push x chunks))))
                      :log-function (lambda (text) (push text log)))))
          (should (equal (passepartout-epc-call-sync conn 'echo '(1 "ü\n\"" (:k nil) 2.5))
                         '(1 "ü\n\"" (:k nil) 2.5)))
          (should (equal (passepartout-epc-call-sync conn 'poke '(3)) 3))
          (passepartout-test-wait (lambda () (cl-some (lambda (l) (string-match-p "eval" l)) log))
                                  10 "the refused call")
          (should (equal (reverse chunks) '("x0" "x1" "x2")))
          (should-error (passepartout-epc-call-sync conn 'no-such-method nil))
          (passepartout-epc-close conn)
          (should-not (passepartout-epc-live-p conn)))
      (delete-process process)
      (kill-buffer buffer)
      (delete-file script))))

(provide 'passepartout-epc-test)
;;; passepartout-epc-test.el ends here
