// Accounts: passwords are Argon2id hashes set by the operator's command from standard input.
import t from 'tap';
import { checkPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { adminWithInput } from './cli.ts';

const srv = await startTestServer(t);
const db = srv.config.databaseUrl;

t.test(
  'user set-password reads the password from standard input and stores an Argon2id hash',
  async (t) => {
    const owner = await newOrganization(srv);
    const set = await adminWithInput(
      db,
      'correct horse battery\n',
      'user',
      'set-password',
      '--email',
      owner.email.toUpperCase(),
      '--json',
    );
    t.equal(set.code, 0, set.stderr);
    t.same(JSON.parse(set.stdout), { email: owner.email.toUpperCase(), passwordSet: true });
    const { rows } = await srv.deps.pool.query(
      'SELECT password_hash, password_set_at FROM users WHERE id = $1',
      [owner.userId],
    );
    t.match(rows[0].password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    t.notMatch(rows[0].password_hash, /horse/);
    t.ok(rows[0].password_set_at);
    // the trailing line break is not part of the password
    t.equal(await checkPassword(srv.deps.pool, owner.email, 'correct horse battery'), owner.userId);
    t.equal(await checkPassword(srv.deps.pool, owner.email, 'correct horse battery\n'), null);
    t.equal(await checkPassword(srv.deps.pool, owner.email, 'wrong horse battery'), null);
    t.equal(
      await checkPassword(srv.deps.pool, 'nobody@example.test', 'correct horse battery'),
      null,
    );

    // set again (the operator's "forgot password"): the old one stops working
    t.equal(
      (
        await adminWithInput(
          db,
          'a brand new secret',
          'user',
          'set-password',
          '--email',
          owner.email,
        )
      ).code,
      0,
    );
    t.equal(await checkPassword(srv.deps.pool, owner.email, 'correct horse battery'), null);
    t.equal(await checkPassword(srv.deps.pool, owner.email, 'a brand new secret'), owner.userId);
  },
);

t.test('user set-password refuses what it cannot do as asked', async (t) => {
  const owner = await newOrganization(srv);
  const unknown = await adminWithInput(
    db,
    'long enough secret',
    'user',
    'set-password',
    '--email',
    'nobody@example.test',
  );
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /no user with that e-mail/);
  const short = await adminWithInput(db, 'short', 'user', 'set-password', '--email', owner.email);
  t.equal(short.code, 2);
  t.match(short.stderr, /at least 10 characters/);
  const argv = await adminWithInput(
    db,
    '',
    'user',
    'set-password',
    '--email',
    owner.email,
    '--password',
    'long enough secret',
  );
  t.equal(argv.code, 2, 'a password on the command line is refused');
  t.match(argv.stderr, /password/);
  const { rows } = await srv.deps.pool.query('SELECT password_hash FROM users WHERE id = $1', [
    owner.userId,
  ]);
  t.equal(rows[0].password_hash, null, 'nothing was set');
});
