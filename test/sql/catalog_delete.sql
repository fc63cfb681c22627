-- Tests only: tries to delete a feature from the catalog. $1 feature
DELETE FROM features WHERE feature = $1
RETURNING feature;
