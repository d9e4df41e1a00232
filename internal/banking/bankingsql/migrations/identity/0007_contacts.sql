-- The organisation's registered address and the user's phone number, which
-- user-info answers as orgJuridicalAddress and phone_number (reference §3)
-- and which partners' clients require (open-condo-software/condo refuses
-- user-info without them). Rows made before the columns have neither; the
-- sandbox's seeded organisation and user get theirs here, since seeding
-- never rewrites rows it finds.
ALTER TABLE banking_orgs ADD COLUMN juridical_address TEXT NOT NULL DEFAULT '';
ALTER TABLE banking_users ADD COLUMN phone TEXT NOT NULL DEFAULT '';
UPDATE banking_orgs SET juridical_address = '117997, г. Москва, ул. Вавилова, д. 19'
    WHERE id = '3d5a0f4e-8b1c-4f7a-9e2d-5c6b7a8d9e01' AND juridical_address = '';
UPDATE banking_users SET phone = '+79000000000'
    WHERE id = '7c1e2d3f-4a5b-4c6d-8e7f-901a2b3c4d5e' AND phone = '';
