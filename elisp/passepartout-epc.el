;;; passepartout-epc.el --- A lean EPC client for Passepartout  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The Passepartout authors

;; Author: The Passepartout authors
;; Keywords: comm, processes
;; Package-Requires: ((emacs "28.1"))

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;;; Commentary:

;; The transport between Emacs and the Passepartout server: a small client
;; of the EPC wire protocol.  A frame is six hexadecimal digits giving the
;; byte length of a UTF-8 s-expression, then the s-expression:
;;
;;   (call UID METHOD ARGS)   (return UID VALUE)
;;   (return-error UID ERR)   (epc-error UID ERR)
;;
;; Calls from Emacs are asynchronous: `passepartout-epc-call' sends a frame
;; and returns at once; the callback registered under its uid runs when the
;; answer arrives.  The server may call into Emacs too, but only the
;; functions of the connection's allow-list run, with the received
;; arguments as data.  Frames are read with `read' and never evaluated.
;;
;; One extension, between this client and the Passepartout server only:
;; a string of `passepartout-epc--attachment-min' characters or more may
;; travel as raw UTF-8 after the s-expression, which holds the symbol
;; `passepartout-attachment-N' in its place:
;;
;;   (attachments SIZE...)MESSAGE BYTES...
;;
;; Printing and reading a megabyte of text costs Elisp tens of
;; milliseconds; raw bytes are a copy.  A connection made with
;; `:attachments' sends them; any connection reads them.

;;; Code:

(require 'cl-lib)

(cl-defstruct (passepartout-epc-connection
               (:constructor passepartout-epc--make-connection)
               (:copier nil))
  "One EPC connection: its process, pending calls and allow-list."
  (process nil :documentation "The network process.")
  (uid 0 :documentation "The last uid used by a call from Emacs.")
  (pending (make-hash-table :test 'eql)
           :documentation "Uid -> (CALLBACK . ERRBACK) of calls awaiting answers.")
  (handlers nil :documentation "Alist of (NAME-STRING . FUNCTION) the server may call.")
  (log-function nil :documentation "Function of one string, for protocol messages.")
  (on-close nil :documentation "Function of the connection, run once when it closes.")
  (replies nil :documentation "Frames queued while a batch of input is handled.")
  (attachments nil :documentation "Non-nil when long strings may go as attachments."))

(defconst passepartout-epc--max-frame #xffffff
  "The largest payload, in bytes, that six hexadecimal digits can announce.")

(defun passepartout-epc--log (conn format-string &rest args)
  "Log FORMAT-STRING with ARGS through CONN's log function."
  (let ((fn (passepartout-epc-connection-log-function conn)))
    (when fn
      (funcall fn (apply #'format format-string args)))))

;;;; Encoding

(defconst passepartout-epc--large-frame (* 64 1024)
  "Frames of this many bytes or more are read with garbage collection deferred.")

(defmacro passepartout-epc--deferring-gc (&rest body)
  "Run BODY, building large strings, with garbage collection deferred.
Without this, printing or reading a megabyte collects garbage several
times over; deferred, it does so at most once, afterwards."
  (declare (indent 0) (debug t))
  `(let ((gc-cons-threshold (max gc-cons-threshold (* 256 1024 1024))))
     ,@body))

(defconst passepartout-epc--attachment-min (* 16 1024)
  "Strings of this many characters or more may travel as attachments.")

(defconst passepartout-epc--attachment-prefix "passepartout-attachment-"
  "The name of an attachment's placeholder symbol, before its index.")

(defun passepartout-epc--detach (object found)
  "Return OBJECT with its long strings replaced by placeholder symbols.
The strings are pushed on the car of FOUND, a cons; OBJECT is not
modified, and is returned itself when it holds no long string.  A
symbol in OBJECT that reads as a placeholder throws
`passepartout-epc--ambiguous'."
  (cond
   ((and (stringp object) (>= (length object) passepartout-epc--attachment-min))
    (push object (car found))
    (intern (format "%s%d" passepartout-epc--attachment-prefix (1- (length (car found))))))
   ((and (symbolp object)
         (string-prefix-p passepartout-epc--attachment-prefix (symbol-name object)))
    (throw 'passepartout-epc--ambiguous nil))
   ((consp object)
    (let ((tail object) (items nil) (changed nil))
      (while (consp tail)
        (let ((item (passepartout-epc--detach (car tail) found)))
          (unless (eq item (car tail)) (setq changed t))
          (push item items))
        (setq tail (cdr tail)))
      (let ((end (passepartout-epc--detach tail found)))
        (if (or changed (not (eq end tail)))
            (nconc (nreverse items) end)
          object))))
   (t object)))

(defvar passepartout-epc--gc-hold nil
  "While a large frame arrives, (THRESHOLD . TIMER): the value to restore.")

(defun passepartout-epc--hold-gc ()
  "Defer garbage collection while a large frame arrives, a second at most.
Each piece of output Emacs reads is a new string: a megabyte arriving
would collect garbage several times; held, it does so once."
  (unless passepartout-epc--gc-hold
    (let ((held (max gc-cons-threshold (* 256 1024 1024))))
      (setq passepartout-epc--gc-hold
            (cons gc-cons-threshold
                  (run-at-time 1 nil #'passepartout-epc--release-gc held)))
      (setq gc-cons-threshold held))))

(defun passepartout-epc--release-gc (&optional held)
  "Restore the `gc-cons-threshold' of before the hold.
HELD, when given, is the value the hold set; restore only if it is still
in place, that is, nobody changed it meanwhile."
  (when passepartout-epc--gc-hold
    (let ((hold passepartout-epc--gc-hold))
      (setq passepartout-epc--gc-hold nil)
      (cancel-timer (cdr hold))
      (when (or (null held) (eql gc-cons-threshold held))
        (setq gc-cons-threshold (car hold))))))

(defun passepartout-epc-encode (object &optional attachments)
  "Return the frame for OBJECT: its length prefix and its UTF-8 printed form.
With ATTACHMENTS non-nil, its long strings follow as raw bytes."
  (let ((pieces (passepartout-epc--frame-pieces object attachments)))
    (if (cdr pieces) (apply #'concat pieces) (car pieces))))

(defun passepartout-epc--frame-pieces (object attachments)
  "Return the frame for OBJECT as a list of strings to send in order.
Without ATTACHMENTS, or without a long string in OBJECT, that is one
string; else the length prefix and the message, then each attachment,
uncopied: a megabyte copied is a megabyte more for the collector."
  (passepartout-epc--deferring-gc
    (let* ((found (and attachments (list nil)))
           (message (if found
                        (catch 'passepartout-epc--ambiguous
                          (passepartout-epc--detach object found))
                      object)))
      (if (or (null (car found)) (null message))
          (list (passepartout-epc--encode-1 object))
        (passepartout-epc--attached-pieces message (nreverse (car found)))))))

(defun passepartout-epc--attached-pieces (message strings)
  "Return the pieces of the frame for MESSAGE followed by STRINGS."
  (let* ((blobs (mapcar (lambda (s)
                          ;; A unibyte string is bytes already: no copy.
                          (if (multibyte-string-p s) (encode-coding-string s 'utf-8 t) s))
                        strings))
         (head (concat "(attachments "
                       (mapconcat (lambda (b) (number-to-string (length b))) blobs " ")
                       ")"))
         (printed (substring (passepartout-epc--encode-1 message) 6))
         (size (+ (length head) (length printed) (apply #'+ (mapcar #'length blobs)))))
    (when (> size passepartout-epc--max-frame)
      (error "Passepartout: frame of %d bytes is too large" size))
    (cons (concat (format "%06x" size) head printed) blobs)))

(defun passepartout-epc--encode-1 (object)
  "Return the frame for OBJECT, garbage collection permitting."
  (let* ((print-escape-newlines nil)
         (print-escape-control-characters nil)
         (print-escape-nonascii nil)
         (print-escape-multibyte nil)
         (print-length nil)
         (print-level nil)
         (print-circle nil)
         (print-quoted t)
         (float-output-format nil)
         (printed (prin1-to-string object))
         ;; A unibyte printed form is ASCII already: no copy to encode it.
         (payload (if (multibyte-string-p printed)
                      (encode-coding-string printed 'utf-8 t)
                    printed)))
    (when (> (length payload) passepartout-epc--max-frame)
      (error "Passepartout: frame of %d bytes is too large" (length payload)))
    (concat (format "%06x" (length payload)) payload)))

(defconst passepartout-epc--return-headers
  (let ((headers (make-vector 32 nil)))
    (dotimes (n 32) (aset headers n (format "%06x" n)))
    headers)
  "The length prefixes of short frames, made once.")

(defun passepartout-epc--return-header (len)
  "Return the length prefix for LEN bytes."
  (if (< len 32) (aref passepartout-epc--return-headers len) (format "%06x" len)))

(defun passepartout-epc--encode-fast (object attachments)
  "Return the pieces of the frame for OBJECT, quickly for (return UID nil).
ATTACHMENTS is as for `passepartout-epc-encode'."
  (if (and (eq (car-safe object) 'return) (integerp (nth 1 object))
           (null (nth 2 object)) (null (nthcdr 3 object)))
      (let ((digits (number-to-string (nth 1 object))))
        (list (concat (passepartout-epc--return-header (+ 13 (length digits)))
                      "(return " digits " nil)")))
    (passepartout-epc--frame-pieces object attachments)))

(defun passepartout-epc--send (conn object &optional now)
  "Send OBJECT over CONN, or queue it while a batch of input is handled.
With NOW, send it and the frames queued before it at once."
  (let ((pieces (passepartout-epc--encode-fast
                 object (passepartout-epc-connection-attachments conn)))
        (queued (passepartout-epc-connection-replies conn))
        (process (passepartout-epc-connection-process conn)))
    (cond ((or now (eq queued 'direct))
           (unless (eq queued 'direct)
             (setf (passepartout-epc-connection-replies conn) nil)
             ;; One write for the queued frames and this one's start: Emacs
             ;; cannot turn Nagle off, so a second small write would wait.
             (setcar pieces (apply #'concat (nreverse (cons (car pieces) queued)))))
           (dolist (piece pieces)
             (process-send-string process piece)))
          (t (push (apply #'concat pieces) (passepartout-epc-connection-replies conn))))))

(defun passepartout-epc--flush (conn)
  "Send the frames CONN queued while its input was handled, in order."
  (let ((frames (passepartout-epc-connection-replies conn))
        (process (passepartout-epc-connection-process conn)))
    (setf (passepartout-epc-connection-replies conn) 'direct)
    (when (and (consp frames) (process-live-p process))
      (process-send-string process (apply #'concat (nreverse frames))))))

;;;; Decoding

(defun passepartout-epc--read-payload (beg end)
  "Read the s-expression between BEG and END of the current unibyte buffer.
An ASCII payload, the common case, is read in place; any other is
decoded from UTF-8 first.  Attachments are put in their places."
  (let ((attached (progn (goto-char beg) (looking-at-p "(attachments "))))
    (cond ((and (< (- end beg) passepartout-epc--large-frame) (not attached))
           (passepartout-epc--read-payload-1 beg end))
          (attached
           (passepartout-epc--deferring-gc
             (passepartout-epc--read-attached beg end)))
          (t
           (passepartout-epc--deferring-gc
             (passepartout-epc--read-payload-1 beg end))))))

(defun passepartout-epc--read-attached (beg end)
  "Read the message between BEG and END, its attachments following it."
  (condition-case err
      (let* ((sizes (save-restriction
                      (narrow-to-region beg end)
                      (cdr (read (current-buffer)))))
             (start (- end (apply #'+ (if (and sizes (cl-every #'natnump sizes))
                                           sizes
                                         (error "Bad attachment sizes")))))
             (strings (make-vector (length sizes) nil))
             (message-beg (point))
             (pos start))
        (when (< start message-beg)
          (error "The attachments are longer than the frame"))
        (dotimes (i (length sizes))
          (aset strings i (passepartout-epc--utf-8-string pos (+ pos (nth i sizes))))
          (setq pos (+ pos (nth i sizes))))
        (let ((message (passepartout-epc--read-payload-1 message-beg start))
              (used (make-bool-vector (length sizes) nil)))
          (if (eq (car-safe message) 'passepartout-epc--malformed)
              message
            (setq message (passepartout-epc--attach message strings used))
            (unless (cl-every #'identity used)
              (error "An attachment is not referenced"))
            message)))
    (error (list 'passepartout-epc--malformed (error-message-string err)))))

(defun passepartout-epc--utf-8-string (beg end)
  "Return the UTF-8 text between BEG and END of the current unibyte buffer.
ASCII text is returned as it is, a unibyte string: decoding would copy it."
  (let ((bytes (buffer-substring-no-properties beg end)))
    (goto-char beg)
    (if (= (skip-chars-forward "\0-\177" end) (- end beg))
        bytes
      (decode-coding-string bytes 'utf-8 t))))

(defun passepartout-epc--attach (object strings used)
  "Return OBJECT with each placeholder replaced by its string in STRINGS.
USED, a bool vector, records the attachments placed; OBJECT is modified."
  (cond
   ((consp object)
    (let ((tail object))
      (while (consp tail)
        (setcar tail (passepartout-epc--attach (car tail) strings used))
        (unless (listp (cdr tail))
          (setcdr tail (passepartout-epc--attach (cdr tail) strings used)))
        (setq tail (cdr tail))))
    object)
   ((and (symbolp object)
         (string-prefix-p passepartout-epc--attachment-prefix (symbol-name object)))
    (let* ((digits (substring (symbol-name object)
                              (length passepartout-epc--attachment-prefix)))
           (index (and (string-match-p "\\`[0-9]+\\'" digits) (string-to-number digits))))
      (unless (and index (< index (length strings)) (not (aref used index)))
        (error "%s names no attachment of this frame" object))
      (aset used index t)
      (aref strings index)))
   (t object)))

(defun passepartout-epc--read-payload-1 (beg end)
  "Read the s-expression between BEG and END, garbage collection permitting."
  (let ((read-circle nil))
    (condition-case err
        (save-restriction
          (narrow-to-region beg end)
          (goto-char beg)
          (if (= (skip-chars-forward "\0-\177") (- end beg))
              (progn
                (goto-char beg)
                (let ((value (read (current-buffer))))
                  (skip-chars-forward " \t\n\r")
                  (if (eobp) value
                    (list 'passepartout-epc--malformed "trailing text after the s-expression"))))
            (let* ((text (decode-coding-string (buffer-substring-no-properties beg end) 'utf-8 t))
                   (parsed (read-from-string text)))
              (if (string-match-p "[^ \t\n\r]" text (cdr parsed))
                  (list 'passepartout-epc--malformed "trailing text after the s-expression")
                (car parsed)))))
      (error (list 'passepartout-epc--malformed (error-message-string err))))))

(defun passepartout-epc--header (pos)
  "Return the length in the six hexadecimal digits at POS, or nil."
  (let ((value 0) (end (+ pos 6)))
    (while (and value (< pos end))
      (let* ((c (char-after pos))
             (digit (cond ((and (>= c ?0) (<= c ?9)) (- c ?0))
                          ((and (>= c ?a) (<= c ?f)) (- c 87))
                          ((and (>= c ?A) (<= c ?F)) (- c 55)))))
        (setq value (and digit (+ (* value 16) digit))
              pos (1+ pos))))
    value))

(defun passepartout-epc--take-frames (conn)
  "Return the complete frames in CONN's process buffer, removing them."
  (let ((pos (point-min)) (limit (point-max)) frames bad)
    (while (and (not bad) (>= (- limit pos) 6))
      (let ((len (passepartout-epc--header pos)))
        (cond
         ((null len) (setq bad (buffer-substring-no-properties pos (+ pos 6))))
         ((> (+ pos 6 len) limit) (setq limit pos))
         (t (push (passepartout-epc--read-payload (+ pos 6) (+ pos 6 len)) frames)
            (setq pos (+ pos 6 len))))))
    (delete-region (point-min) pos)
    (when bad
      (passepartout-epc--log conn "bad frame header %S: closing the connection" bad)
      (erase-buffer)
      (push (list 'passepartout-epc--fatal bad) frames))
    (nreverse frames)))

;;;; Dispatch

(defun passepartout-epc--error-text (err)
  "Return a short description of the condition ERR."
  (if (stringp err) err (error-message-string err)))

(defun passepartout-epc--handle-call (conn uid method args)
  "Run the allow-listed METHOD of CONN with ARGS and answer UID."
  (let* ((name (cond ((symbolp method) (symbol-name method))
                     ((stringp method) method)))
         (fn (and name (cdr (assoc name (passepartout-epc-connection-handlers conn))))))
    (cond
     ((null fn)
      (passepartout-epc--log conn "refused call %d of %S: not in the allow-list" uid method)
      (passepartout-epc--send
       conn (list 'epc-error uid (format "passepartout: method not allowed: %s" method))))
     ((not (listp args))
      (passepartout-epc--log conn "refused call %d of %s: arguments are not a list" uid name)
      (passepartout-epc--send
       conn (list 'epc-error uid (format "passepartout: bad arguments for %s" name))))
     (t
      (condition-case err
          (progn (apply fn args)
                 (passepartout-epc--send conn (list 'return uid nil)))
        (error
         (passepartout-epc--log conn "callback %s failed: %s" name (error-message-string err))
         (passepartout-epc--send
          conn (list 'return-error uid (error-message-string err)))))))))

(defun passepartout-epc--handle-answer (conn kind uid value)
  "Run the callback of CONN's call UID for an answer of KIND carrying VALUE."
  (let* ((pending (passepartout-epc-connection-pending conn))
         (entry (gethash uid pending)))
    (if (null entry)
        (passepartout-epc--log conn "answer to unknown call %S dropped" uid)
      (remhash uid pending)
      (condition-case err
          (if (eq kind 'return)
              (when (car entry) (funcall (car entry) value))
            (funcall (or (cdr entry) #'passepartout-epc--default-errback)
                     (if (eq kind 'epc-error) (list 'epc-error value) value)))
        (error (passepartout-epc--log conn "callback of call %d failed: %s"
                                      uid (error-message-string err)))))))

(defun passepartout-epc--default-errback (err)
  "Report ERR, the error answer of a call that has no error callback."
  (message "Passepartout: %s" (passepartout-epc-format-error err)))

(defun passepartout-epc-format-error (err)
  "Return a readable text for ERR, an error answer from the server."
  (pcase err
    (`(,kind ,text) (format "%s: %s" kind text))
    ((pred stringp) err)
    (_ (format "%S" err))))

(defun passepartout-epc--dispatch (conn frame)
  "Act on one decoded FRAME received by CONN."
  (pcase frame
    (`(call ,(and uid (pred integerp)) ,method ,args)
     (passepartout-epc--handle-call conn uid method args))
    (`(call ,(and uid (pred integerp)) ,method)
     (passepartout-epc--handle-call conn uid method nil))
    (`(,(and kind (or 'return 'return-error 'epc-error)) ,(and uid (pred integerp)) . ,rest)
     (passepartout-epc--handle-answer conn kind uid (car rest)))
    (`(passepartout-epc--fatal ,_)
     (passepartout-epc-close conn))
    (`(,(or 'methods 'call) ,(and uid (pred integerp)) . ,_)
     (passepartout-epc--log conn "refused frame %S" frame)
     (passepartout-epc--send conn (list 'epc-error uid "passepartout: not supported")))
    (_
     (passepartout-epc--log conn "malformed frame dropped: %S" frame)
     (when (and (consp frame) (integerp (nth 1 frame)))
       (passepartout-epc--send
        conn (list 'epc-error (nth 1 frame) "passepartout: malformed frame"))))))

(defun passepartout-epc--large-frame-pending-p ()
  "Return non-nil when a large frame begins the current buffer, incomplete."
  (and (>= (buffer-size) 6)
       (let ((len (passepartout-epc--header (point-min))))
         (and len (>= len passepartout-epc--large-frame)))))

(defun passepartout-epc--filter (conn)
  "Return the process filter of CONN."
  (lambda (process output)
    (let ((buffer (process-buffer process)))
      (when (buffer-live-p buffer)
        (let ((frames (with-current-buffer buffer
                        (goto-char (point-max))
                        (insert output)
                        (prog1 (passepartout-epc--take-frames conn)
                          (if (passepartout-epc--large-frame-pending-p)
                              (passepartout-epc--hold-gc)
                            (passepartout-epc--release-gc))))))
          (when frames
            ;; Answers are sent in one write per batch; a nested batch (a
            ;; callback waiting for output) joins the outer one.
            (let ((outer (not (eq (passepartout-epc-connection-replies conn) 'direct))))
              (unless outer
                (setf (passepartout-epc-connection-replies conn) nil))
              (unwind-protect
                  (dolist (frame frames)
                    (passepartout-epc--dispatch conn frame))
                (unless outer
                  (passepartout-epc--flush conn))))))))))

(defun passepartout-epc--sentinel (conn)
  "Return the process sentinel of CONN."
  (lambda (process _event)
    (unless (process-live-p process)
      (passepartout-epc--closed conn))))

(defun passepartout-epc--closed (conn)
  "Fail each pending call of CONN and run its close function, once."
  (let ((pending (passepartout-epc-connection-pending conn))
        (on-close (passepartout-epc-connection-on-close conn))
        (buffer (process-buffer (passepartout-epc-connection-process conn)))
        errbacks)
    (maphash (lambda (_uid entry) (push (cdr entry) errbacks)) pending)
    (clrhash pending)
    (passepartout-epc--release-gc)
    (setf (passepartout-epc-connection-on-close conn) nil)
    (dolist (errback errbacks)
      (funcall (or errback #'ignore) (list 'connection-closed "the server went away")))
    (when (buffer-live-p buffer) (kill-buffer buffer))
    (when on-close (funcall on-close conn))))

;;;; Public interface

(cl-defun passepartout-epc-connect (host port &key handlers log-function on-close
                                          attachments family)
  "Connect to the EPC server at HOST and PORT and return the connection.
With FAMILY `local', PORT is the file name of a Unix socket and HOST is
ignored.  HANDLERS is an alist of (NAME . FUNCTION), the only functions
the server may call; NAME is a string.  LOG-FUNCTION receives protocol
messages as strings.  ON-CLOSE is called with the connection when it
closes.  With ATTACHMENTS, long strings are sent as attachments: for a
server that reads them."
  (let* ((buffer (generate-new-buffer " *passepartout-epc*" t))
         ;; Many small frames: read them as they come, do not wait for more.
         (process-adaptive-read-buffering nil)
         (process (condition-case err
                      (apply #'make-network-process
                             :name "passepartout-epc" :buffer buffer
                             :service port
                             :coding 'binary :noquery t
                             ;; Emacs cannot set TCP_NODELAY (`:nodelay' is
                             ;; ignored), so the server acknowledges every frame
                             ;; at once (TCP_QUICKACK) for our small frames not
                             ;; to wait on a delayed ACK.  A Unix socket has no
                             ;; such delay.
                             :nowait nil
                             (if (eq family 'local) '(:family local) (list :host host)))
                    (error (kill-buffer buffer)
                           (signal (car err) (cdr err)))))
         (conn (passepartout-epc--make-connection
                :process process :handlers handlers
                :log-function log-function :on-close on-close
                :replies 'direct :attachments attachments)))
    (with-current-buffer buffer (set-buffer-multibyte nil))
    (set-process-filter process (passepartout-epc--filter conn))
    (set-process-sentinel process (passepartout-epc--sentinel conn))
    (set-process-query-on-exit-flag process nil)
    conn))

(defun passepartout-epc-live-p (conn)
  "Return non-nil when CONN is open."
  (and conn (process-live-p (passepartout-epc-connection-process conn))))

(defun passepartout-epc-call (conn method args &optional callback errback)
  "Call METHOD with ARGS on CONN and return the call's uid at once.
CALLBACK receives the value returned; ERRBACK receives an error answer,
usually a list (KIND MESSAGE).  Without ERRBACK errors are reported with
`message'."
  (unless (passepartout-epc-live-p conn)
    (error "Passepartout: not connected"))
  (let ((uid (cl-incf (passepartout-epc-connection-uid conn))))
    (puthash uid (cons callback errback) (passepartout-epc-connection-pending conn))
    (passepartout-epc--send conn (list 'call uid method args) t)
    uid))

(defun passepartout-epc-call-sync (conn method args &optional timeout)
  "Call METHOD with ARGS on CONN and wait at most TIMEOUT seconds for the value.
For small values and tests only: interactive code uses `passepartout-epc-call'.
Signal an error on an error answer or when TIMEOUT (default 10) passes."
  (let* ((done nil) (value nil) (failure nil)
         (deadline (+ (float-time) (or timeout 10)))
         (process (passepartout-epc-connection-process conn)))
    (passepartout-epc-call conn method args
                           (lambda (v) (setq value v done t))
                           (lambda (e) (setq failure e done t)))
    (while (and (not done) (< (float-time) deadline) (process-live-p process))
      (accept-process-output process (- deadline (float-time))))
    (cond (failure (error "Passepartout: %s" (passepartout-epc-format-error failure)))
          ((not done) (error "Passepartout: no answer to %s" method))
          (t value))))

(defun passepartout-epc-close (conn)
  "Close CONN; each pending call gets a `connection-closed' error."
  (let ((process (passepartout-epc-connection-process conn)))
    (when (process-live-p process)
      (delete-process process))
    (when (passepartout-epc-connection-on-close conn)
      (passepartout-epc--closed conn))))

(provide 'passepartout-epc)
;;; passepartout-epc.el ends here
