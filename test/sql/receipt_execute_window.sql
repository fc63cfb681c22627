-- Tests only: the execute window receipt_append() applies, in minutes.
SELECT (extract(epoch FROM receipt_execute_window()) / 60)::integer AS minutes;
