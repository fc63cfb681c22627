-- Tests only: how iso_time() renders a given instant. $1 timestamptz as text
SELECT iso_time($1::timestamptz) AS iso;
