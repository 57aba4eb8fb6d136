/**
 * The Python client (clients/python), installed into an empty virtual environment, on its tests that
 * need no relay: the checksum vectors, the stream state machine and book updates, and a scripted
 * relay for connecting (`await connect`, its timeout, refusal), logging, event streams, errors,
 * `since`, `replay()` and the README's names. Apart from python.test.ts so that neither pytest run nears its deadline.
 */
import { describe, expect, it } from 'vitest';
import { installedPythonClient, pythonAvailable, runPytest } from '../support/clients/python-client.ts';

describe.skipIf(!(await pythonAvailable()))('the Python client without a relay', () => {
  it('passes its pure and scripted-relay tests', async () => {
    const python = await installedPythonClient();
    const result = await runPytest(
      python,
      [
        'test_client_fake_relay.py',
        'test_history_fake_relay.py',
        'test_checksum_vectors.py',
        'test_stream_state.py',
        'test_book_apply.py',
        'test_connect.py',
        'test_logging.py',
        'test_event_streams.py',
        'test_readme_names.py',
      ],
      {},
    );
    expect(result.code, result.output).toBe(0);
    expect(result.output).not.toMatch(/skipped/);
  });
});
