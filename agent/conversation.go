package agent

import "context"

// conversationKey is the context key of [WithConversation].
type conversationKey struct{}

// WithConversation returns a copy of ctx that names the conversation the
// runs under it belong to: a thread of a chat, a session's id. The loop
// does nothing with it; integrations read it with [Conversation] (package
// otelagent records it as the gen_ai.conversation.id of each run's span),
// and so may an Observer, from the context it is handed. Package session
// sets it to the stored conversation's id when ctx names none; package
// agentserver sets it to the thread's id.
func WithConversation(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, conversationKey{}, id)
}

// Conversation returns the id [WithConversation] put in ctx, or "" when it
// names no conversation.
func Conversation(ctx context.Context) string {
	id, _ := ctx.Value(conversationKey{}).(string)
	return id
}
