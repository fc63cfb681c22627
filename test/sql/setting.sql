-- Tests only: a server setting as SHOW reports it. $1 setting name
SELECT current_setting($1) AS value;
